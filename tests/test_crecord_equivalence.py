"""The compiled record work (`_crecord`) gives exactly what the Python reference gives.

Every file of a run has its edit list rendered and counted and its counts tallied
(`runner._figures`: `packed_edits.summarise` and `runner._tally` in Python) and its entry
rendered (`FileResult.entry_json`) in C, and the run's totals summed (`records.add_counts`). On generated texts (newlines, CRLF, quotes,
backslashes, control characters, non-ASCII, astral characters, lone surrogates), edits, field
tables and entries (strings of every kind, big and negative numbers, floats, nested values,
and values the C code leaves to Python: subclasses, non-str keys, NaN), both paths must give the
same JSON text, byte for byte, and the same figures.
"""

from __future__ import annotations

import json
import math
import re
from array import array
from collections import Counter
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musify import diagnostics as diagnostics_module
from musify import packed_edits, records, runner
from musify.diagnostics import Diagnostic, make
from musify.engine.edits import Edit, EditList, merge
from musify.frontend.scanner import LineIndex
from musify.packed_edits import PackedEdits
from musify.records import FileResult, RunRecord, add_counts, compute_totals
from tests.test_packed_edits import ALPHABET, words
from tests.test_packed_edits import cases as edit_cases

NATIVE = runner._NATIVE
needs_crecord = pytest.mark.skipif(NATIVE is None, reason="the compiled record module is not built")
CATEGORIES = st.sampled_from(["reference", "include", "shim-include", "arch-guard"])
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _without_native(fn):
    """`fn()` with every compiled record path off."""
    saved = records._NATIVE, runner._NATIVE
    records._NATIVE = runner._NATIVE = None
    try:
        return fn()
    finally:
        records._NATIVE, runner._NATIVE = saved


def _merged(case: tuple[str, list[Edit]]) -> tuple[str, EditList]:
    text, edits = case
    return text, merge(edits) if edits else EditList()


cases = edit_cases().map(_merged)  # test_packed_edits' texts and edits, merged as the runner has them


class Rules:
    """A RuleSet's one question `_count_fields` asks: which rules count as converted."""

    def __init__(self, unconverted: set[str]) -> None:
        self.unconverted = unconverted

    def lookup(self, name: str):
        from musify.rules.model import Rule

        status = "unsupported" if name in self.unconverted else "renamed"
        return Rule(cuda=name, musa=name + "_m", kind="function", library="cudart", status=status)


def _one_byte_each(text: str) -> bool:
    """What `size == len(text)` says of a decoded file: every character was one byte."""
    return all(ord(c) < 0x80 or 0xDC80 <= ord(c) <= 0xDCFF for c in text)


def _figures(text: str, edits: EditList, render: bool, lines: LineIndex | None = None, seen: bool = True):
    """`runner._figures` in C and in Python, comparable (the packed edits as their JSON), and the
    C call's own answer; `seen`: the run has counted the file's field tuples already (else the C
    call leaves the file to Python, which counts them)."""
    lines = lines or LineIndex(text)
    ascii, rules = _one_byte_each(text), Rules({"cudaFree", "x"})

    def comparable(packed, *rest):
        return ("".join(packed.iter_json()) if packed is not None else None, *rest)

    plain = _without_native(lambda: runner._figures(edits, text, lines, ascii, render, rules))
    if not seen:
        runner._COUNTED[:] = [None, {}]
    native = runner._figures(edits, text, lines, ascii, render, rules)
    return comparable(*native), comparable(*plain), native


def _same(a: tuple, b: tuple) -> None:
    assert a == b
    for x, y in zip(a, b):  # the dicts in the same order too
        if isinstance(x, dict):
            assert list(x.items()) == list(y.items())


field_tuples = st.tuples(words, st.sampled_from(["cudaMalloc", "cudaFree", "x", "é"]), words, words,
                         st.booleans(), CATEGORIES)


@st.composite
def tables(draw, case: tuple[str, EditList]) -> tuple[str, EditList]:
    """The case's edits with their fields drawn from a few tuples (a run's renames repeat them)."""
    text, edits = case
    fields = draw(st.lists(field_tuples, min_size=1, max_size=4, unique=True))
    a = array("i", edits._a)
    a[2::3] = array("i", [draw(st.integers(0, len(fields) - 1)) for _ in range(len(edits))])
    return text, EditList(a, fields)


@needs_crecord
@pytest.mark.parametrize("render", [True, False])
@SETTINGS
@given(case=st.one_of(cases, cases.flatmap(tables)), seen=st.booleans())
def test_an_edit_list_renders_and_counts_alike(render, case, seen):
    text, edits = case
    native, plain, answer = _figures(text, edits, render, seen=seen)
    _same(native, plain)
    if render:  # and both are what the record meant: json.dumps of a dict per edit
        lines = LineIndex(text)
        dicts = [{"start": list(lines.position(e.start)), "end": list(lines.position(e.end)),
                  "old": text[e.start:e.end], "new": e.replacement, "rule": e.rule, "library": e.library,
                  "kind": e.kind, "category": e.category, "inferred": e.inferred} for e in edits]
        assert native[0] == json.dumps(dicts, separators=(",", ":"))
        assert type(answer[0]) is PackedEdits and answer[0]._json is not None


@needs_crecord
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases)
def test_big_files_and_line_starts_in_an_array_agree(case):
    text, edits = case
    lines = LineIndex(text)
    lines._starts = lines.made = array("q", lines._starts)  # as a file of a million lines holds them
    _same(*_figures(text, edits, True, lines)[:2])
    saved = packed_edits.RENDER_MAX
    packed_edits.RENDER_MAX = 0  # every file big: arrays, rendered a chunk at a time
    try:
        native, plain, answer = _figures(text, edits, True)
        assert answer[0]._json is None or not edits
        _same(native, plain)
    finally:
        packed_edits.RENDER_MAX = saved


TRICKY = [  # the C code leaves these to Python, which answers (or raises) as it always did
    ("abc", [(0, 9, 0)]), ("abc", [(2, 1, 0)]), ("abc", [(2, 3, 0), (0, 1, 0)]), ("abc", [(-1, 1, 0)]),
    ("a\ud800b", [(1, 2, 0)]), ("", [(0, 0, 0)]), ("a\nb", [(0, 3, 0), (3, 3, 0)]),
]


@needs_crecord
@pytest.mark.parametrize(("text", "rows"), TRICKY)
def test_rows_the_c_code_refuses_get_the_python_answer(text, rows):
    edits = EditList(array("i", [v for row in rows for v in row]), [("x", "r", "l", "k", False, "reference")])
    results = []
    for pick in (0, 1):
        try:
            results.append(_figures(text, edits, True)[pick])
        except Exception as exc:  # noqa: BLE001 -- compared: both paths must raise alike
            results.append((type(exc), str(exc)))
    assert results[0] == results[1]


strings = st.text(alphabet=st.one_of(ALPHABET, st.characters()), max_size=12)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2 ** 70), 2 ** 70), strings,
                    st.floats(allow_nan=True, allow_infinity=True))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.tuples(inner, inner),
                                                       st.dictionaries(strings, inner, max_size=3)), max_leaves=8)


class Text(str):
    pass


class Count(int):
    pass


class Finding(Diagnostic):
    __slots__ = ()


ODD = [Text("x"), Count(3), {1: 2}, {True: "a"}, {None: 1}, [Count(1)], {"a": Text("b")}, float("nan"), (1, [2]), 2 ** 64]
ODD_DIAGNOSTICS = [Finding("MU1", "note", "p", 1, 1, "m"), Diagnostic("MU1", "note", "p", 1, 1, "m", sites=({1, 2},)),
                   Diagnostic("MU1", Text("note"), "p", 1, 1, "m"), Diagnostic("MU1", "note", "p", 1, 1, "m", args={2: 3})]


diagnostics = st.one_of(
    st.builds(make, st.sampled_from(["MU2030", "MU1001", "MU0001"]), strings, st.integers(1, 9), st.integers(1, 9),
              strings),
    st.builds(Diagnostic, strings, st.sampled_from(["error", "warning", "note"]), strings, st.integers(0, 2 ** 65),
              st.integers(0, 9), strings, strings, st.sampled_from([0, 3, None]), st.sampled_from([0, 7, None]),
              st.dictionaries(strings, values, max_size=2), strings,
              st.sampled_from([(), ((1, 2),), ((3, 4), [5, 6]), ([7, 8],)]), strings))


@st.composite
def results(draw) -> FileResult:
    edits = draw(st.one_of(st.none(), st.just([]), st.lists(st.dictionaries(strings, values, max_size=3), max_size=2),
                           st.builds(lambda: PackedEdits.of_json(1, '[{"a":"\\u00e9"}]'))))
    diags = draw(st.lists(diagnostics, max_size=3))
    return FileResult(draw(strings), draw(strings), draw(strings), draw(strings), rel=draw(strings),
                      edit_count=draw(st.integers(0, 2 ** 66)), edits=edits,
                      references={"converted": draw(st.integers(0, 9)), "unconverted": draw(scalars)},
                      renamed=draw(st.dictionaries(strings, st.integers(), max_size=3)),
                      unconverted=draw(st.dictionaries(strings, values, max_size=2)),
                      facts=draw(st.one_of(st.dictionaries(strings, st.integers(), max_size=2), st.sampled_from(ODD))),
                      diagnostics=diags, seconds=draw(st.one_of(st.floats(0, 1e9), st.just(1e-7), st.just(0.0))),
                      error=draw(st.one_of(st.none(), strings)), lines_total=draw(st.sampled_from([0, 1, Count(2), True])))


def _plain_entry(f: FileResult, deterministic: bool) -> str:
    d = f.to_json()
    if deterministic:
        d["seconds"] = 0.0
    return json.dumps(d, separators=(",", ":"))


@needs_crecord
@SETTINGS
@given(result=results(), deterministic=st.booleans())
def test_an_entry_renders_alike(result, deterministic):
    native = "".join(result.iter_json(deterministic))
    plain = _without_native(lambda: "".join(result.iter_json(deterministic)))
    assert native == plain == _plain_entry(result, deterministic)
    assert native.isascii()


def test_the_diagnostic_shape_is_to_json():
    """The C call writes a diagnostic from its attributes, by `records._DIAGNOSTIC_FIELDS`: the
    keys `Diagnostic.to_json` makes, in its order (a field added there must be added here)."""
    d = make("MU2030", "x.cu", 3, 1, "cudnnCreate")
    assert [k for k, _, _ in records._DIAGNOSTIC_FIELDS] == list(d.to_json())


@needs_crecord
@pytest.mark.parametrize("odd", ODD)
def test_values_the_c_code_leaves_to_python_render_alike(odd):
    result = FileResult("é\udcff\"\\", "o", "k", "migrated", facts=odd, seconds=math.pi)
    written = result.entry_json()
    assert written is None or written == _plain_entry(result, False)
    assert "".join(result.iter_json()) == _plain_entry(result, False)


@needs_crecord
@pytest.mark.parametrize("odd", ODD_DIAGNOSTICS)
def test_diagnostics_the_c_code_leaves_to_python_render_alike(odd):
    result = FileResult("a.cu", "a.mu", "cuda-source", "migrated", diagnostics=[make("MU2030", "a.cu", 1, 1, "n"), odd])
    assert result.entry_json() is None
    assert "".join(result.iter_json()) == _plain_entry(result, False)


@needs_crecord
@SETTINGS
@given(counts=st.lists(st.dictionaries(st.sampled_from(["a", "b", "é", "c"]),
                                       st.one_of(st.integers(-5, 2 ** 70), st.booleans()), max_size=3), max_size=5))
def test_totals_sum_alike(counts):
    native: dict = {}
    add_counts(native, counts)
    plain: dict = {}
    _without_native(lambda: add_counts(plain, counts))
    assert list(native.items()) == list(plain.items())
    assert all(type(native[k]) is type(plain[k]) for k in plain)
    assert records._NATIVE.add_counts({}, [*counts, Counter()]) is False  # a subclass: Python's loop


def _fresh(key: str) -> str:
    """An object equal to `key` but not it (the sums find a key met before by its address first)."""
    return "".join(list(key))


count_keys = st.sampled_from(["a", "b", "é", "cudaMalloc"]).flatmap(
    lambda k: st.sampled_from([k, _fresh(k), Text(k)]))
counts = st.dictionaries(count_keys, st.one_of(st.integers(-5, 99), st.booleans(), st.just(2 ** 70)), max_size=4)


@needs_crecord
@SETTINGS
@given(files=st.lists(st.builds(FileResult, st.just("a.cu"), st.just("a.mu"), st.just("cuda-source"),
                                st.sampled_from(["migrated", "unchanged", _fresh("migrated")]),
                                edits_by_library=counts, edits_by_kind=counts, renamed=counts, unconverted=counts,
                                facts=counts, edit_count=st.one_of(st.integers(0, 99), st.just(2 ** 64)),
                                references=st.fixed_dictionaries({"converted": st.integers(0, 9),
                                                                  "unconverted": st.integers(0, 9)})),
                      max_size=8))
def test_the_run_s_totals_sum_alike(files):
    """compute_totals in C (one pass, each key found by its address where met before) and in Python."""
    native = compute_totals(files)
    plain = _without_native(lambda: compute_totals(files))
    assert native == plain
    assert [list(v) if isinstance(v, dict) else v for v in native.values()] == \
        [list(v) if isinstance(v, dict) else v for v in plain.values()]


def _reordered(f: FileResult, fresh: bool) -> FileResult:
    """`f` with its fields stored in reverse order, each name a new string when `fresh` (the sums
    read a file's fields in one walk of its __dict__, by the very name objects in the order the
    last file stored them; any other key is looked up)."""
    g = object.__new__(FileResult)
    g.__dict__ = {(_fresh(k) if fresh else k): v for k, v in reversed(f.__dict__.items())}
    return g


@needs_crecord
@pytest.mark.parametrize("references", [{"converted": 2, "unconverted": 1}, Counter(converted=2, unconverted=1),
                                        {"converted": 2.5, "unconverted": 1}, {"converted": 2, "unconverted": 2 ** 70}])
def test_totals_of_files_stored_in_any_order_and_of_any_references_sum_alike(references):
    """Fields stored in another order or under other name objects than the last file's, and
    references that are not an exact dict of ints (summed by Python's path), sum as in Python."""
    made = [FileResult(f"{i}.cu", f"{i}.mu", "cuda-source", ["migrated", "unchanged"][i % 2], edit_count=i,
                       renamed={"cudaMalloc": i}, references=dict(references) if i % 3 else references,
                       diagnostics=[make("MU2030", f"{i}.cu", 1, 1, "cudnnCreate")] * (i % 3))
            for i in range(9)]
    files = [_reordered(f, fresh=bool(i % 2)) if i % 3 == 1 else f for i, f in enumerate(made)]
    native = compute_totals(files)
    assert native == _without_native(lambda: compute_totals(files))
    assert native["references_converted"] == sum(f.references["converted"] for f in made)


@needs_crecord
def test_totals_of_references_without_a_count_fail_alike():
    files = [FileResult("a.cu", "a.mu", "cuda-source", "migrated", references={"converted": 1})]
    with pytest.raises(KeyError):
        compute_totals(files)
    with pytest.raises(KeyError):
        _without_native(lambda: compute_totals(files))


@needs_crecord
def test_a_real_run_writes_the_same_record_with_and_without_c():
    """A run over the corpora, its record and totals rendered by both paths."""
    from pathlib import Path

    from musify.api import migrate
    from musify.options import Options

    repo = Path(__file__).resolve().parents[1]
    inputs = [str(repo / "corpora")]
    native, _ = migrate(inputs, Options(cache=False))
    plain, _ = _without_native(lambda: migrate(inputs, Options(cache=False)))
    for a, b in zip(native.files, plain.files):
        a.seconds = b.seconds
    native.seconds, native.started = plain.seconds, plain.started
    text = native.dumps()
    assert text == _without_native(plain.dumps)
    assert text == _without_native(native.dumps)
    assert compute_totals(native.files) == _without_native(lambda: compute_totals(plain.files))
    assert isinstance(RunRecord.from_json(json.loads(text)), RunRecord)


@pytest.mark.parametrize("piece", [1, 40, 300, records.PIECE])
def test_a_record_gathered_into_pieces_of_any_size_is_the_same_record(monkeypatch, piece):
    """Entries are gathered into pieces of about PIECE characters, and one bigger than that goes
    alone: the joined pieces are the record, whatever the size."""
    edit = {"start": [1, 1], "end": [1, 101], "old": "x" * 100, "new": "é", "rule": "r", "library": "l",
            "kind": "k", "category": "reference", "inferred": False}
    edits = PackedEdits.of_json(2, json.dumps([edit, edit], separators=(",", ":")))
    files = [FileResult(f"{i}.cu", f"{i}.mu", "cuda-source", "migrated", edits=edits if i % 2 else [],
                        diagnostics=[make("MU2030", f"{i}.cu", 1, 1, "n")] * (i % 3)) for i in range(7)]
    record = RunRecord("1", "musify migrate", ["."], "out", {"jobs": 1}, "d", "now", 2.0, files)
    expected = record.dumps()
    monkeypatch.setattr(records, "PIECE", piece)
    pieces = list(record.iter_bytes())
    assert b"".join(pieces).decode() == expected
    assert json.loads(expected)["files"] == [json.loads(_plain_entry(f, False)) for f in files]
    if piece == 1:
        assert len(pieces) > len(files)


class Later(FileResult):
    """A result of another class: `entries` leaves it to Python."""


def _unstored(result: FileResult) -> FileResult:
    """`result` with a field read from the class rather than its own storage (entry_json's
    attribute path)."""
    del result.__dict__["error"]
    return result


@needs_crecord
@settings(SETTINGS, max_examples=100)
@given(files=st.lists(st.one_of(results(), results().map(_unstored),
                                st.builds(Later, strings, strings, strings, strings, seconds=st.floats(0, 9))),
                      max_size=4),
       deterministic=st.booleans(), piece=st.sampled_from([1, 200, records.PIECE]))
def test_a_record_of_many_entries_renders_alike(files, deterministic, piece):
    """The record's entries, rendered in C many to a piece (`_crecord.entries`), stepping aside
    for each entry it leaves to Python, are the pure-Python record's bytes."""

    def text() -> str:  # (the entries alone: these results' values are any JSON, not a valid record's)
        return b"".join(records.iter_entries(files, deterministic)).decode()

    saved, records.PIECE = records.PIECE, piece
    try:
        native = text()
    finally:
        records.PIECE = saved
    assert native == _without_native(text)
    assert native == ("    " + ",\n    ".join(_plain_entry(f, deterministic) for f in files) if files else "")


def test_packed_edits_text_is_their_json_slot():
    """`_crecord.entries` reads an exact PackedEdits' `_json` slot for `text()`: the same thing,
    rendered or not (a big file's arrays: None)."""
    rendered = PackedEdits.of_json(1, '[{"a":1}]')
    big = PackedEdits.__new__(PackedEdits)
    big._json = None
    for packed in (rendered, big):
        assert packed.text() is packed._json
    assert records._LAYOUT[-2:] == ("text", "_json")


# floats whose round(x, 6) is a tie or near one (x * 10^6 ends in .5: 1/128 = 0.0078125), on a
# boundary of repr's forms (1e-4, 1e-5), sub-microsecond, huge, negative, not finite, not floats
SECONDS = [0.0078125, 3 / 128, 2.5e-6, 5e-7, 4.999999e-7, 1e-4, 9.99999e-5, 1e-5, 1.5e-5, 1e-6, 1e-7, 0.1, 0.3,
           1 / 3, 2 / 3, 123456.7890125, 999999999.9999995, 1e9, 1e15, 1e300, 5e-324, -0.0, -1e-9, -2.5,
           float("inf"), float("-inf"), float("nan"), 0, 7, True, Count(3)]


@needs_crecord
@SETTINGS
@given(seconds=st.one_of(st.floats(0, 1e9), st.floats(allow_nan=False), st.integers(0, 10 ** 15).map(lambda n: n / 1e6),
                         st.integers(0, 10 ** 9).map(lambda n: n / 128), st.sampled_from(SECONDS)))
def test_seconds_are_rounded_and_written_alike(seconds):
    """An entry's `seconds` is rounded to six places and written in C where that is exact (any
    doubt: Python's round and repr): the text is always json.dumps(round(seconds, 6))."""
    result = FileResult("a.cu", "a.mu", "cuda-source", "migrated", seconds=seconds)
    want = json.dumps(round(seconds, 6))
    assert f'"seconds":{want},' in b"".join(records.iter_entries([result])).decode()
    assert f'"seconds":{want},' in result.entry_json()  # (rounded in Python, written in C)


@needs_crecord
def test_a_diagnostic_with_an_unset_field_fails_alike():
    """The C call reads a diagnostic's slots directly; one never set raises getattr's error."""
    whole, unset = make("MU2030", "a.cu", 1, 1, "n"), object.__new__(Diagnostic)
    for name, put in zip(diagnostics_module._FIELDS, diagnostics_module._PUT):
        if name != "message":
            put(unset, getattr(whole, name))
    result = FileResult("a.cu", "a.mu", "cuda-source", "migrated", diagnostics=[unset])
    with pytest.raises(AttributeError, match="message"):
        result.entry_json()
    with pytest.raises(AttributeError, match="message"):
        _without_native(lambda: "".join(result.iter_json()))


@SETTINGS
@given(fields=st.lists(st.tuples(words, st.sampled_from(["cudaMalloc", "cudaFree", "x", "é", "Ā", "𐀀", "cudaMallocé"]),
                                 st.sampled_from(["", "a", "b", "é", "Ā", "𐀀", "ab", "a\0"]), words, st.booleans(),
                                 CATEGORIES), min_size=1, max_size=40, unique=True),
       picks=st.lists(st.integers(0, 39), min_size=1, max_size=80))
def test_many_field_tuples_count_alike(fields, picks):
    """A file whose edits have many field tuples (more than the C tally sorts by insertion), with
    labels and names of every string width and equal labels in distinct objects: the counts, and
    their key order, are the Python ones."""
    text = "ab\n" * len(picks)
    a = array("i")
    for k, pick in enumerate(picks):
        a.extend((3 * k, 3 * k + 2, pick % len(fields)))
    fields = [(new, "".join(rule), library, kind, inferred, category)  # equal strings, other objects
              for new, rule, library, kind, inferred, category in fields]
    native, plain, _ = _figures(text, EditList(a, fields), True, seen=False)
    _same(native, plain)
    assert NATIVE.record(text, a, LineIndex(text)._starts, fields, runner._COUNTED[1], True, True) is not None  # (C counted)


@needs_crecord
@SETTINGS
@given(case=st.one_of(cases, cases.flatmap(tables)), render=st.booleans())
def test_a_file_without_its_line_table_counts_the_newlines_to_the_same_record(case, render):
    """`_crecord.record` handed no line table (a file whose positions nothing asked for yet)
    finds each edit's line by counting newlines: the record the table gives."""
    text, edits = case
    ascii, rules = _one_byte_each(text), Rules({"cudaFree", "x"})
    fresh, made = LineIndex(text), LineIndex(text)
    made.position(0)  # the table made
    walked = runner._figures(edits, text, fresh, ascii, render, rules)
    looked_up = runner._figures(edits, text, made, ascii, render, rules)

    def comparable(packed, *rest):
        return ("".join(packed.iter_json()) if packed is not None else None, *rest)

    _same(comparable(*walked), comparable(*looked_up))


@needs_crecord
@SETTINGS
@given(text=st.lists(st.sampled_from(["\n", "\r", "a", " ", "é", "Ā", "𐀀", "\udcff", "\n\n"])).map("".join),
       pad=st.integers(0, 40))
def test_a_file_s_line_count_is_the_newlines_plus_one(text, pad):
    """`_crecord.line_count` (a file's `lines_total` where its line table was never made) is
    `LineIndex.line_count`, on texts of each string width and of lengths about the sixteen
    characters it compares at once (and past the 255 blocks after which it sums its lanes)."""
    for t in (text, "x" * pad + text, text * 300 + "\n" * pad, "\n" * (4096 + pad)):
        assert NATIVE.line_count(t) == LineIndex(t).line_count == t.count("\n") + 1


@needs_crecord
@pytest.mark.parametrize("text", ["", "a", "\n", "a\r\nb\r\n", "\n" * 16 * 255, "\n" * (16 * 255 + 17)])
def test_fill_counts_the_lines_as_the_line_table_does(text):
    """`_fill`'s count without a line table is the count the table gives."""
    result, made = FileResult("a.cu", "a.mu", "k", "unchanged"), FileResult("a.cu", "a.mu", "k", "unchanged")

    def context(lines: LineIndex) -> SimpleNamespace:  # what `_fill` reads of a file's context
        found = SimpleNamespace(diagnostics=[], unconverted={}, facts={}, declared=set(), pending_unknown=[],
                                warp_aliases=set(), pending_warp=[], pasting=set(), unknown_args=[])
        return SimpleNamespace(found=found, options=SimpleNamespace(json_lite=False), lines=lines)

    table = LineIndex(text)
    table.position(0)
    runner._fill(result, context(LineIndex(text)), None, text, len(text), None)
    runner._fill(made, context(table), None, text, len(text), None)
    assert result.lines_total == made.lines_total == (text.count("\n") + 1 if text else 0)


@needs_crecord
def test_an_entry_s_shape_is_checked_again_when_another_is_given():
    """The C call keeps the last shape it checked; another tuple is checked and used (and a bad
    one refused) however often the first was given."""
    result = FileResult("a.cu", "a.mu", "cuda-source", "migrated", diagnostics=[make("MU2030", "a.cu", 1, 1, "n")])
    first = result.entry_json()
    assert result.entry_json() == first == _plain_entry(result, False)
    values = list(records._VALUES(result))
    cls, keys, attrs, alts = records._DIAGNOSTIC
    other = (cls, keys[:1], attrs[:1], alts[:1])
    written = NATIVE.entry(records._KEYS, values, records._EDITS_AT, None, other)
    assert '"diagnostics":[{"id":"MU2030"}]' in written
    with pytest.raises(TypeError):
        NATIVE.entry(records._KEYS, values, records._EDITS_AT, None, (cls, (1,), attrs[:1], alts[:1]))
    assert result.entry_json() == first


@needs_crecord
def test_record_reads_its_arguments_alike_by_any_route():
    """The runner's arguments (exact types, bool flags) are read from the tuple as they are; any
    others (ints for the flags) by the format: the same answer either way, twice over (the field
    tuples' answers remembered from the first call)."""
    text = "cudaMalloc(p);\ncudaFree(p);\n"
    fields = [("musaMalloc", "cudaMalloc", "runtime", "function", False, "reference"),
              ("musaFree", "cudaFree", "runtime", "function", False, "reference")]
    a = array("i", [0, 10, 0, 15, 23, 1])
    _figures(text, EditList(a, fields), True)  # (the field tuples counted into the run's memo)
    memo = runner._COUNTED[1]
    starts = LineIndex(text)._starts
    got = NATIVE.record(text, a, starts, fields, memo, True, True)
    assert got is not None
    assert NATIVE.record(text, a, starts, fields, memo, 1, 1) == got
    assert NATIVE.record(text, a, starts, fields, memo, True, True) == got
    with pytest.raises(TypeError):
        NATIVE.record(text, a, starts, tuple(fields), memo, True, True)


@needs_crecord
@pytest.mark.parametrize("tail", ["", "x" * 15, "y" * 16, "z" * 40])
@pytest.mark.parametrize("made", [False, True])
def test_sixteen_at_a_time_reads_alike(tail, made):
    """The record's newline counts and quoted text, sixteen bytes compared at once: spans whose
    plain run ends at, before and after a sixteen-byte boundary, near the end of the text, with
    characters to escape (quotes, a backslash, a tab, DEL, Latin-1) and lines of every length,
    with the line table made or not."""
    lines = ["a" * k + ' "q" \\ \t\x7f\xe9 cudaFree(x);' for k in range(40)]
    text = "\n".join(lines) + "\n" + tail + "cudaFree" + tail[:3]
    a = array("i")
    for m in re.finditer(r'cudaFree|"q" \\|\xe9 cuda|a{17,33}', text):
        a.extend((m.start(), m.end(), 0))
    edits = EditList(a, [("musaFree", "cudaFree", "runtime", "function", False, "reference")])
    lines_index = LineIndex(text)
    if made:
        lines_index._starts  # noqa: B018 -- (the table made)
    native, plain, _ = _figures(text, edits, True, lines_index)
    _same(native, plain)
    assert NATIVE.record(text, a, lines_index.made, edits._fields.values, runner._COUNTED[1], True, False) is not None


@needs_crecord
@SETTINGS
@given(keys=st.lists(st.one_of(words, st.sampled_from(["", "a", "ab", "é", "Ā", "𐀀", "\udcff", "a\0"])), unique=True),
       counter=st.booleans(), ordered=st.booleans())
def test_a_dict_of_counts_is_put_in_key_order_alike(keys, counter, ordered):
    """`_crecord.sorted_counts` (a file's facts and unconverted names in key order) is
    `runner._sorted_python`: the same plain dict, items in the same order, whether the keys came
    in order (copied as they are) or not (sorted), of a dict or a Counter, of any string width."""
    keys = sorted(keys) if ordered else keys
    d = (Counter if counter else dict)((k, i) for i, k in enumerate(keys))
    got, want = NATIVE.sorted_counts(d), runner._sorted_python(d)
    assert type(got) is dict and got is not d
    assert list(got.items()) == list(want.items())


@needs_crecord
@pytest.mark.parametrize("d", [{1: 1, 0: 2}, {0: 1}, {(1, "a"): 1, (0, "b"): 2}, {"b": 1, 2: 0}])
def test_counts_of_other_keys_are_put_in_order_alike(d):
    """Keys that are not strings: sorted as `sorted` sorts the items, or refused alike."""
    try:
        want = runner._sorted_python(d)
    except TypeError:
        with pytest.raises(TypeError):
            NATIVE.sorted_counts(d)
        return
    assert list(NATIVE.sorted_counts(d).items()) == list(want.items())
