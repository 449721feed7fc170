"""The memory-saving paths (packed edits, streamed record, ports written as they arrive, big
files' bytes not held) give exactly what the plain paths give (benchmarks/README.md has the figures)."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

from musify import packed_edits, runner
from musify.api import migrate
from musify.engine.edits import Edit
from musify.frontend import lines as line_index
from musify.frontend.scanner import LineIndex
from musify.options import Options
from musify.packed_edits import PackedEdits
from musify.records import FileResult, RunRecord
from musify.rules.reverse import load_for
from musify.runner import FileJob

REPO = Path(__file__).resolve().parents[1]
TEXT = 'int a;\n/* é "q" \\ */ cudaMalloc(x);\n\udcff cudaFree(p); é\n'


def _edits() -> list[Edit]:
    a = TEXT.index("cudaMalloc")
    f = TEXT.index("cudaFree")
    return [Edit(0, 0, "#include <musa.h>\n", "include:x", "cudart", "", False, "shim-include"),
            Edit(a, a + 10, "musaMalloc", "cudaMalloc", "cudart", "function"),
            Edit(f, f + 8, 'mu"\\é', "cudaFree", "", "function", True),
            Edit(len(TEXT) - 2, len(TEXT) - 1, "", "\udcfe", "lib", "k", False, "arch-guard")]


def _dicts(edits: list[Edit], text: str) -> list[dict]:
    lines = LineIndex(text)
    return [{"start": list(lines.position(e.start)), "end": list(lines.position(e.end)), "old": text[e.start:e.end],
             "new": e.replacement, "rule": e.rule, "library": e.library, "kind": e.kind, "category": e.category,
             "inferred": e.inferred} for e in edits]


@pytest.mark.parametrize("render_max", [packed_edits.RENDER_MAX, 0])  # held as JSON, as arrays
def test_packed_edits_read_and_write_as_the_dicts_they_replace(monkeypatch, render_max):
    monkeypatch.setattr(packed_edits, "RENDER_MAX", render_max)
    edits = _edits()
    packed = PackedEdits(edits, TEXT, LineIndex(TEXT).position)
    plain = _dicts(edits, TEXT)
    assert packed == plain and list(packed) == plain and len(packed) == 4
    assert packed[-1] == plain[-1] and packed[1:3] == plain[1:3] and packed[::2] == plain[::2]
    assert pickle.loads(pickle.dumps(packed)) == plain
    pieces = list(packed.iter_json(chunk=1))
    assert "".join(pieces) == json.dumps(plain, separators=(",", ":"))
    assert len(pieces) > 3 if render_max == 0 else pieces == [packed.iter_json().__next__()]


def test_a_record_with_packed_edits_writes_the_same_bytes_as_with_dicts():
    packed = PackedEdits(_edits(), TEXT, LineIndex(TEXT).position)
    files = [FileResult("a.cu", "a.mu", "cuda-source", "migrated", rel="a.cu", edit_count=4, edits=packed),
             FileResult("b.cu", "b.mu", "cuda-source", "migrated", rel="b.cu", edits=None, seconds=1.5),
             FileResult("c.cu", "c.mu", "cuda-source", "unchanged", rel="c.cu")]
    record = RunRecord("1", "musify migrate", ["."], "out", {"jobs": 2}, "d", "now", 2.0, files)
    plain_files = [FileResult(**{**f.__dict__, "edits": list(f.edits) if f.edits is not None else None})
                   for f in files]
    plain = RunRecord("1", "musify migrate", ["."], "out", {"jobs": 2}, "d", "now", 2.0, plain_files)
    for deterministic in (False, True):
        text = record.dumps(deterministic)
        assert text == plain.dumps(deterministic)
        assert json.loads(text) == plain.to_json(deterministic) == record.to_json(deterministic)
    empty = RunRecord("1", "c", [], "out", {}, "d")
    assert empty.dumps().endswith('"files": [\n\n  ]\n}\n')


def _result(path: Path, rules, options):
    job = FileJob(str(path), path.name, str(path.parent), "cuda-source", path.with_suffix(".mu").name, path.name)
    result, data = runner.migrate_file(job, rules, options, None)
    result.seconds = 0.0
    return result, data


def test_a_big_file_whose_bytes_and_line_list_are_not_held_migrates_the_same(tmp_path, monkeypatch):
    options = Options(cache=False)
    rules = load_for(options)
    src = min((REPO / "corpora").rglob("*.cu")).read_bytes()
    cases = {"ported.cu": src, "bad-utf8.cu": src + b"\n// \xff\xfe cudaFree\n", "clean.cu": b"int x;\n",
             "same.cu": b"int cudaMalloc;\n"}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    plain = {name: _result(tmp_path / name, rules, options) for name in cases}
    monkeypatch.setattr(runner, "LARGE", 0)
    monkeypatch.setattr(line_index, "_ARRAY_FROM", 0)  # line starts in an array, as for a million lines (`LineIndex` lives in lines.py)
    for name in cases:
        assert _result(tmp_path / name, rules, options) == plain[name], name
    assert plain["ported.cu"][0].status == "migrated" and plain["clean.cu"][0].status == "migrated"


def test_an_output_that_cannot_be_written_as_it_arrives_fails_that_file_only(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(REPO / "corpora" / "vector_add", tree, ignore=shutil.ignore_patterns("expected*"))
    first = min(tree.rglob("*.cu"))
    out = tmp_path / "out"
    (out / first.relative_to(tree).with_suffix(".mu")).mkdir(parents=True)  # a folder where the port goes
    record, _ = migrate([str(tree)], Options(cache=False), "out", str(out))
    bad = [f for f in record.files if f.status == "failed"]
    assert [f.rel for f in bad] == [first.relative_to(tree).as_posix()]
    assert bad[0].diagnostics[-1].id == "MU0009" and bad[0].error.startswith("cannot write output")
    for f in record.files:
        if f.status == "migrated":
            assert (out / f.output_path).is_file()


def test_a_cut_incremental_pack_keeps_its_whole_entries(tmp_path):
    """The pack is read entry by entry: cut short, the entries before the cut are still hits and
    the rest are migrated again, with the same result as a run without the cache."""
    tree = tmp_path / "tree"
    shutil.copytree(REPO / "corpora" / "vector_add", tree / "a", ignore=shutil.ignore_patterns("expected*"))
    shutil.copytree(REPO / "corpora" / "vector_add", tree / "b", ignore=shutil.ignore_patterns("expected*"))
    fresh, _ = migrate([str(tree)], Options(cache=False), "out", str(tmp_path / "fresh"))
    migrate([str(tree)], Options(), "out", str(tmp_path / "o1"))
    packs = list((Path(os.environ["MUSIFY_CACHE_DIR"]) / "files").glob("pack-*.pickle"))
    pack = max(packs, key=lambda p: p.stat().st_mtime)
    data = pack.read_bytes()
    pack.write_bytes(data[: len(data) * 3 // 4])
    again, _ = migrate([str(tree)], Options(), "out", str(tmp_path / "o2"))
    assert json.loads(again.dumps(True))["files"] == json.loads(fresh.dumps(True))["files"]
    assert again.totals == fresh.totals
    assert len(pack.read_bytes()) == len(data)  # rewritten whole (the cut entries migrated again)
