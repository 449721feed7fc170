"""The whole-run memo (musify/memo.py): an unchanged re-run of `musify migrate -o` or `musify
check` is replayed (the engine never runs) with byte-identical output tree, record (less
`started` and `seconds`), console output and exit code; every change that could alter any of
those makes the next run a miss, and that run matches a run made without any cache."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from musify import api, cache
from musify.cli import main
from tests.conftest import install_rules
from tests.test_cache import RULES

_RUN_ONLY = re.compile(rb'"(started|seconds)": [^,]*,')  # the two header values a run sets itself


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    install_rules(tmp_path, monkeypatch, RULES)
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    (src / "util.cuh").write_text("#include <cuda_runtime.h>\ninline void f(void **p) { cudaMalloc(p, 4); }\n")
    (src / "main.cu").write_text('#include "util.cuh"\nint main() { void *p; f(&p); cudaFree(p); cudaMyThing(); }\n')
    (src / "other.cu").write_text("void g(void *p) { cudaFree(p); }\n")
    (src / "README").write_text("copied as it is\n")
    (src / "alias.cuh").symlink_to("util.cuh")  # a link is recreated in the output tree: replayed as it is
    return src


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per run that took the normal path (a replayed run never calls api.migrate)."""
    runs: list[int] = []
    real = api.migrate

    def counting(*args, **kw):
        runs.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(api, "migrate", counting)
    return runs


def _migrate(*extra: str, out: str = "out") -> tuple[int, str, bytes, dict[str, bytes]]:
    """(exit code, stderr, record bytes less the run's own values, output tree) of one CLI run."""
    r = CliRunner().invoke(main, ["migrate", "src", "-o", out, "--json", "run.json", *extra])
    assert r.exit_code in (0, 1), r.output + r.stderr
    record = _RUN_ONLY.sub(b"", Path("run.json").read_bytes())
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(Path(out).rglob("*")) if p.is_file()}
    return r.exit_code, r.stderr, record, files


def test_an_unchanged_rerun_is_replayed_byte_identical(tree: Path, engine: list[int]) -> None:
    first = _migrate("-q")
    raw = Path("run.json").read_bytes()
    second = _migrate("-q")
    assert len(engine) == 1  # the second run never reached the engine
    assert second == first
    assert first[1].count("MU1001") == 1 and first[0] == 0  # diagnostics replayed as printed
    assert first[3]["main.mu"].startswith(b'#include "util.muh"') and first[3]["README"] == b"copied as it is\n"
    doc = json.loads(Path("run.json").read_bytes())  # the spliced record is still valid JSON
    assert doc["started"] and doc["seconds"] >= 0 and len(doc["files"]) == 5
    assert os.readlink("out/alias.cuh") == "util.muh"
    assert json.loads(raw)["files"] == doc["files"]


def test_the_summary_is_replayed_too(tree: Path, engine: list[int]) -> None:
    first, second = _migrate(), _migrate()
    assert len(engine) == 1
    drop_time = re.compile(r"^time .*$", re.MULTILINE)
    assert "references" in first[1] and drop_time.sub("", second[1]) == drop_time.sub("", first[1])


def _touch_source(src: Path, _mp) -> None:
    """Same size, same mtime, other bytes: a stamp would miss this change, the content hash does not."""
    path = src / "other.cu"
    st = path.stat()
    path.write_text(path.read_text().replace("cudaFree", "cudaMall"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _set_rules(src: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_rules(src.parent, monkeypatch, RULES.replace("musaFree", "musaRelease"))


CHANGES = {
    "a source's bytes (same size and mtime)": _touch_source,
    "a header others include": lambda src, _mp: (src / "util.cuh").write_text("void cudaMyThing();\n"),
    "a new file": lambda src, _mp: (src / "new.cu").write_text("void h() { cudaFree(0); }\n"),
    "a deleted file": lambda src, _mp: (src / "other.cu").unlink(),
    "a link's target": lambda src, _mp: ((src / "alias.cuh").unlink(), (src / "alias.cuh").symlink_to("other.cu")),
    "a source's permission bits": lambda src, _mp: (src / "other.cu").chmod(0o755),
    "a new .gitignore": lambda src, _mp: (src / ".gitignore").write_text("other.cu\n"),
    "a rule": _set_rules,
    "a vocabulary table": lambda src, _mp: (src.parent / "rules" / "build" / "cmake.toml").open("a").write("# x\n"),
    "an output file's bytes": lambda src, _mp: (src.parent / "out" / "main.mu").write_text("edited by hand\n"),
    "a removed output file": lambda src, _mp: (src.parent / "out" / "other.mu").unlink(),
    "a removed output folder": lambda src, _mp: __import__("shutil").rmtree(src.parent / "out"),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_change_misses_and_matches_an_uncached_run(tree: Path, engine: list[int], change: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    before = _migrate("-q")[3]
    CHANGES[change](tree, monkeypatch)
    code, err, record, files = _migrate("-q")
    assert len(engine) == 2, "the changed run was replayed"
    fresh = _migrate("-q", "--no-cache", out="fresh")
    assert (code, err) == fresh[0:2]
    assert {k: files[k] for k in fresh[3]} == fresh[3] and files.keys() - fresh[3].keys() <= before.keys()
    assert _comparable(record) == _comparable(fresh[2])
    assert _migrate("-q")[2] == record and len(engine) == 3  # and the run after it is replayed again


def _comparable(record: bytes) -> dict:
    doc = json.loads(record)
    for key in ("command", "output"):
        doc.pop(key)
    doc["options"].pop("cache")
    for f in doc["files"]:
        f.pop("seconds")
    return doc


def test_options_arguments_and_musify_itself_are_in_the_key(tree: Path, engine: list[int],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _migrate("-q")
    assert _migrate("-q", "--no-rename")[3].keys() >= {"main.cu", "util.cuh"} and len(engine) == 2
    _migrate("-q", "--fail-on", "warning")
    assert len(engine) == 3
    _migrate("-q", "--fail-on", "warning")
    assert len(engine) == 3
    monkeypatch.setattr(cache, "_source_digest", ["another musify"])
    _migrate("-q", "--fail-on", "warning")
    assert len(engine) == 4
    kept = sorted(p.suffix for p in (Path(os.environ["MUSIFY_CACHE_DIR"]) / "runs").iterdir())
    assert kept == [".json", ".pickle"]  # one memo per command shape: each run replaced the last


def test_check_is_replayed_with_its_findings_and_exit_code(tree: Path, engine: list[int]) -> None:
    runs = [CliRunner().invoke(main, ["check", "src", "-q"]) for _ in range(2)]
    assert len(engine) == 1
    assert runs[0].exit_code == runs[1].exit_code == 1
    assert "src/main.cu: would be migrated" in runs[0].stderr and runs[1].stderr == runs[0].stderr


@pytest.mark.parametrize("flags", [["--no-cache"], ["-v"], ["--report", "r.html"], ["--sarif", "r.sarif"]])
def test_runs_that_are_never_replayed(tree: Path, engine: list[int], flags: list[str]) -> None:
    _migrate("-q", *flags)
    _migrate("-q", *flags)
    assert len(engine) == 2


def test_a_failed_file_or_a_damaged_memo_means_the_normal_path(tree: Path, engine: list[int]) -> None:
    os.mkfifo(tree / "pipe.cu")  # reported as a failed file: never memoised
    assert _migrate("-q")[0] == 1 and _migrate("-q")[0] == 1 and len(engine) == 2
    (tree / "pipe.cu").unlink()
    first = _migrate("-q")
    for slot in (Path(os.environ["MUSIFY_CACHE_DIR"]) / "runs").glob("run-*.pickle"):
        slot.write_bytes(b"not a pickle")
    assert _migrate("-q") == first and len(engine) == 4
    assert _migrate("-q") == first and len(engine) == 4


def test_a_record_shape_the_memo_does_not_know_is_not_memoised(tree: Path, engine: list[int],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo copies whatever file the record writer wrote; when it cannot find where that
    file keeps `started` and `seconds`, it keeps nothing rather than replay a stale value."""
    from musify import cli

    monkeypatch.setattr(cli, "_write_json", lambda record, path, *_: Path(path).write_text(
        json.dumps(record.to_json(), separators=(",", ":"))))
    _migrate("-q")
    _migrate("-q")
    assert len(engine) == 2 and not list((Path(os.environ["MUSIFY_CACHE_DIR"]) / "runs").glob("*.json"))


def test_in_place_is_never_replayed_and_keeps_its_failure_severity(tree: Path, engine: list[int]) -> None:
    r = CliRunner().invoke(main, ["migrate", "src", "--in-place", "-q", "--fail-on", "warning"])
    assert "warning: MU1001" in r.stderr and r.exit_code == 1 and (tree / "main.mu").exists()
    assert engine and not (Path(os.environ["MUSIFY_CACHE_DIR"]) / "runs").exists()
