"""The incremental cache: an unchanged re-run reuses every result and writes the same bytes and
record; each kind of change (file, rule, option, a header's rename, musify's source) re-migrates
exactly what it must."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from musify import api, cache, pool
from musify.options import Options
from tests.conftest import install_rules

RULES = """schema: musify-rules/1
library: cudart
kind: function
status: renamed
vendor_prefixes: [cuda]
rules:
  - {cuda: cudaMalloc, musa: musaMalloc}
  - {cuda: cudaFree, musa: musaFree}
  - {cuda: cuda_runtime.h, musa: musa_runtime.h, kind: header}
"""


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    install_rules(tmp_path, monkeypatch, RULES)
    src = tmp_path / "src"
    src.mkdir()
    (src / "util.cuh").write_text("#include <cuda_runtime.h>\ninline void f(void **p) { cudaMalloc(p, 4); }\n")
    (src / "main.cu").write_text('#include "util.cuh"\n// cudaFree in a comment\n'
                                 "int main() { void *p; f(&p); cudaFree(p); cudaMyThing(); }\n")
    (src / "other.cu").write_text("void g(void *p) { cudaFree(p); }\n")
    return src


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the runner actually migrates (the misses)."""
    seen: list[str] = []
    real = pool.migrate_file_stated

    def counting(job, *args):
        seen.append(job.rel)
        return real(job, *args)

    monkeypatch.setattr(pool, "migrate_file_stated", counting)
    return seen


def _run(src: Path, out: Path, **options) -> tuple[dict, dict[str, bytes]]:
    record, _ = api.migrate([str(src)], Options(**options), "out", str(out))
    doc = json.loads(record.dumps())
    for key in ("started", "seconds", "output"):  # output: each run writes a fresh folder
        doc.pop(key)
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    return doc, files


def test_unchanged_rerun_reuses_everything_byte_identical(tree: Path, tmp_path: Path, calls: list[str]) -> None:
    first = _run(tree, tmp_path / "o1")
    assert sorted(calls) == ["main.cu", "other.cu", "util.cuh"]
    calls.clear()
    second = _run(tree, tmp_path / "o2")
    assert calls == []
    assert second == first
    assert first[1]["main.mu"].startswith(b'#include "util.muh"')
    unknown = [d["id"] for f in first[0]["files"] for d in f["diagnostics"]]
    assert "MU1001" in unknown  # the run-level finaliser ran on the cached results too


def test_a_changed_file_is_the_only_one_migrated(tree: Path, tmp_path: Path, calls: list[str]) -> None:
    _run(tree, tmp_path / "o1")
    calls.clear()
    (tree / "other.cu").write_text("void g(void *p) { cudaFree(p); cudaMalloc(&p, 8); }\n")
    _, files = _run(tree, tmp_path / "o2")
    assert calls == ["other.cu"]
    assert b"musaMalloc(&p, 8)" in files["other.mu"]


def test_a_rule_change_invalidates(tree: Path, tmp_path: Path, calls: list[str], monkeypatch) -> None:
    _run(tree, tmp_path / "o1")
    calls.clear()
    install_rules(tmp_path, monkeypatch, RULES.replace("musa: musaFree", "musa: musaFreeV2"))
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))  # same cache as the first run
    _, files = _run(tree, tmp_path / "o2")
    assert sorted(calls) == ["main.cu", "other.cu", "util.cuh"]
    assert b"musaFreeV2(p)" in files["other.mu"]


def test_a_vocabulary_table_change_invalidates(tree: Path, tmp_path: Path, calls: list[str]) -> None:
    _run(tree, tmp_path / "o1")
    calls.clear()
    with open(tmp_path / "rules" / "torch_cpp" / "structural.toml", "a") as fh:
        fh.write("# the front ends read these tables too\n")
    _run(tree, tmp_path / "o2")
    assert sorted(calls) == ["main.cu", "other.cu", "util.cuh"]


def test_a_user_table_change_invalidates(tree: Path, tmp_path: Path, calls: list[str]) -> None:
    table = tmp_path / "mine.json"
    table.write_text('{"cudaMyThing": "musaMyThing"}')
    _, files = _run(tree, tmp_path / "o1", rules=(str(table),))
    assert b"musaMyThing()" in files["main.mu"]
    calls.clear()
    table.write_text('{"cudaMyThing": "musaMyOtherThing"}')
    _, files = _run(tree, tmp_path / "o2", rules=(str(table),))
    assert "main.cu" in calls and b"musaMyOtherThing()" in files["main.mu"]


def test_an_option_change_invalidates(tree: Path, tmp_path: Path, calls: list[str]) -> None:
    _, files = _run(tree, tmp_path / "o1")
    assert b"// cudaFree in a comment" in files["main.mu"]
    calls.clear()
    _, files = _run(tree, tmp_path / "o2", rewrite_comments=True)
    assert "main.cu" in calls and b"// musaFree in a comment" in files["main.mu"]
    calls.clear()
    _run(tree, tmp_path / "o3", rewrite_comments=True, jobs=2)  # jobs cannot change a result
    assert calls == []


def test_a_header_that_stops_being_renamed_invalidates_its_includers(tree: Path, tmp_path: Path,
                                                                      calls: list[str]) -> None:
    _, files = _run(tree, tmp_path / "o1")
    assert files["main.mu"].startswith(b'#include "util.muh"')
    calls.clear()
    (tree / "util.muh").write_text("// a MUSA header already there: util.cuh keeps its name\n")
    _, files = _run(tree, tmp_path / "o2")
    assert "main.cu" in calls and "other.cu" not in calls
    assert files["main.mu"].startswith(b'#include "util.cuh"')


def test_a_header_that_declares_a_name_updates_other_files_without_remigrating(tree, tmp_path, calls) -> None:
    first, _ = _run(tree, tmp_path / "o1")
    assert any(d["id"] == "MU1001" for f in first["files"] if f["rel"] == "main.cu" for d in f["diagnostics"])
    calls.clear()
    with open(tree / "util.cuh", "a") as fh:
        fh.write("void cudaMyThing();\n")
    second, _ = _run(tree, tmp_path / "o2")
    assert calls == ["util.cuh"]
    assert not any(d["id"] == "MU1001" for f in second["files"] for d in f["diagnostics"])


def test_musify_source_change_and_no_cache(tree: Path, tmp_path: Path, calls: list[str], monkeypatch) -> None:
    _run(tree, tmp_path / "o1")
    calls.clear()
    monkeypatch.setattr(cache, "_source_digest", ["a different musify"])
    _run(tree, tmp_path / "o2")
    assert len(calls) == 3
    calls.clear()
    _run(tree, tmp_path / "o3", cache=False)
    assert len(calls) == 3


def test_an_interrupted_run_leaves_no_part_written_pack(tree: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the middle of a run: the pack it had started is removed, the old one is kept."""
    _run(tree, tmp_path / "o1")
    (tree / "main.cu").write_text("int main() { cudaFree(0); }\n")
    (tree / "other.cu").write_text("void g(void *p) { cudaMalloc(&p, 1); }\n")
    real = pool.migrate_file_stated
    migrated = []

    def interrupted(job, *args):
        if migrated:
            raise KeyboardInterrupt
        migrated.append(job.rel)
        return real(job, *args)

    monkeypatch.setattr(pool, "migrate_file_stated", interrupted)
    packs = tmp_path / "cache" / "files"
    before = {p.name: p.read_bytes() for p in packs.iterdir()}
    with pytest.raises(KeyboardInterrupt):
        _run(tree, tmp_path / "o2")
    assert migrated and {p.name: p.read_bytes() for p in packs.iterdir()} == before
