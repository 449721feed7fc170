"""The record's edit lists, made the fast way, are the plain way's, byte for byte.

`PackedEdits` renders a file's edits once, in bulk (positions by bisection, ends moved along the
start's line, each field tuple and each replaced text quoted once and remembered across files),
and `runner._fill` counts them per distinct field tuple. The plain reference is what the record
meant all along: a dict per edit made with `LineIndex.position` and `json.dumps` of the list, and
counters summed over those dicts. On generated texts (newlines, CRLF, quotes, backslashes,
control characters, non-ASCII, lone surrogates) and edits, both ways must agree, for the JSON
form and the array form of big files, whole and in chunks, and through pickling.
"""

from __future__ import annotations

import json
import pickle
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musify import packed_edits
from musify.api import migrate
from musify.engine.edits import Edit, EditList, merge
from musify.frontend.scanner import LineIndex
from musify.options import Options
from musify.packed_edits import PackedEdits

REPO = Path(__file__).resolve().parents[1]
ALPHABET = st.sampled_from(list('ab_ \n\r\t"\\/é\u2028\x00\x1f\x7f\udcff\udc80\U0001f600{}[]:,'))
texts = st.text(alphabet=ALPHABET, max_size=60)
words = st.one_of(st.sampled_from(["", "cudaMalloc", "musaMalloc", "cudart", "function", "reference"]),
                  st.text(alphabet=ALPHABET, max_size=6))


@st.composite
def cases(draw) -> tuple[str, list[Edit]]:
    text = draw(texts)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    edits, pos = [], 0
    for a, b in zip(cuts[0::2], cuts[1::2]):
        if a < pos:
            continue
        edits.append(Edit(a, b, draw(words), draw(words), draw(words), draw(words), draw(st.booleans()),
                          draw(st.sampled_from(["reference", "include", "shim-include", "arch-guard"]))))
        pos = b if b > a else b + 1  # no two insertions at one offset (merge would refuse them)
    return text, edits


def _plain(text: str, edits: list[Edit]) -> list[dict]:
    lines = LineIndex(text)
    return [{"start": list(lines.position(e.start)), "end": list(lines.position(e.end)), "old": text[e.start:e.end],
             "new": e.replacement, "rule": e.rule, "library": e.library, "kind": e.kind, "category": e.category,
             "inferred": e.inferred} for e in edits]


@pytest.mark.parametrize("render_max", [packed_edits.RENDER_MAX, 0])  # held as JSON, as arrays
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(case=cases(), chunk=st.integers(1, 5))
def test_packed_edits_write_and_read_what_the_plain_dicts_do(monkeypatch, render_max, case, chunk):
    monkeypatch.setattr(packed_edits, "RENDER_MAX", render_max)
    text, edits = case
    plain = _plain(text, edits)
    expected = json.dumps(plain, separators=(",", ":"))
    compact = merge(edits)
    assert isinstance(compact, EditList)
    for source in (edits, compact):
        packed = PackedEdits(source, text, LineIndex(text).position)
        assert "".join(packed.iter_json(chunk=chunk)) == expected
        assert list(packed) == plain and len(packed) == len(plain)
        again = pickle.loads(pickle.dumps(packed, protocol=pickle.HIGHEST_PROTOCOL))
        assert "".join(again.iter_json()) == expected and again == plain
        if plain:
            assert packed[-1] == plain[-1] and packed[:2] == plain[:2]


def test_every_file_entry_of_a_real_run_counts_what_its_edits_say():
    """`_fill`'s counters (per distinct field tuple, plain dicts, line changes from the packed
    positions) against the same figures summed over the record's own edit dicts."""
    record, _ = migrate([str(REPO / "corpora")], Options(cache=False))
    files = [f for f in record.files if f.edits]
    assert sum(len(f.edits) for f in files) > 1000
    for f in files:
        edits = list(f.edits)
        assert f.edit_count == len(edits)
        assert f.lines_changed == len({e["start"][0] for e in edits})
        assert f.bytes_changed == sum(len(e["old"].encode("utf-8", "surrogateescape")) for e in edits)
        assert f.edits_by_library == dict(sorted(Counter(e["library"] or "unknown" for e in edits).items()))
        assert f.edits_by_kind == dict(sorted(Counter(e["kind"] or "unknown" for e in edits).items()))
        assert f.inferred_edits == sum(e["inferred"] for e in edits)
        assert f.include_rewrites == sum(e["category"] == "include" for e in edits)
        assert f.shim_includes == sum(e["category"] == "shim-include" for e in edits)
        assert set(f.renamed) <= {e["rule"] for e in edits if e["category"] == "reference"}


def test_a_run_whose_files_all_count_as_big_writes_the_same_record(monkeypatch):
    """The big-file path (edits kept as arrays, positions made a chunk at a time, lines counted
    without a position list) gives the record the JSON path gives."""
    inputs = [str(REPO / "corpora")]
    plain = migrate(inputs, Options(cache=False))[0].dumps(deterministic=True)
    monkeypatch.setattr(packed_edits, "RENDER_MAX", 0)
    monkeypatch.setattr(packed_edits, "CHUNK", 3)
    record = migrate(inputs, Options(cache=False))[0]
    assert any(isinstance(f.edits, PackedEdits) and f.edits._json is None and len(f.edits) > 3 for f in record.files)
    assert record.dumps(deterministic=True) == plain
