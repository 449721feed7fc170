"""The output tree's writes (musify/writers.py `write_into`, musify/writer_thread.py): a fresh
tree, a re-run into an existing one, targets that cannot be written, and the -j1 writer thread,
which must give the same tree and record as writing inline, report failures the same way, and
leave no half-written file when the run stops early."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from musify import pool, writer_thread, writers
from musify.api import migrate
from musify.options import Options
from musify.pool import Writes

REPO = Path(__file__).resolve().parents[1]
ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False


@pytest.fixture(autouse=True)
def _new_run():
    writers.forget_dirs()
    yield
    writers.forget_dirs()


def _src(tmp_path: Path, name: str, data: bytes, mode: int) -> str:
    p = tmp_path / "src" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    os.chmod(p, mode)
    return str(p)


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob(".musify-*"))


def test_a_fresh_tree_gets_the_bytes_and_the_sources_modes(tmp_path):
    out = tmp_path / "out"
    cases = {"a/b/c/x.mu": 0o640, "a/y.mu": 0o755, "z.mu": 0o600, "a/b/w.mu": 0o4755}
    for rel, mode in cases.items():
        src = _src(tmp_path, rel.replace("/", "_"), b"old", mode)
        writers.write_into(str(out), rel, rel.encode() * 3, src)
    for rel, mode in cases.items():
        assert (out / rel).read_bytes() == rel.encode() * 3
        assert stat.S_IMODE(os.stat(out / rel).st_mode) == mode, rel
    assert _leftovers(out) == []


def test_a_source_of_another_owner_gives_its_owner_where_allowed(tmp_path):
    src = _src(tmp_path, "a.cu", b"x", 0o640)
    if ROOT:
        os.chown(src, 1234, 4321)
    writers.write_into(str(tmp_path / "out"), "d/a.mu", b"new", src)
    st = os.stat(tmp_path / "out" / "d" / "a.mu")
    assert stat.S_IMODE(st.st_mode) == 0o640
    if ROOT:
        assert (st.st_uid, st.st_gid) == (1234, 4321)


def test_a_rerun_leaves_identical_files_alone_and_replaces_the_others(tmp_path):
    out = tmp_path / "out"
    src = _src(tmp_path, "a.cu", b"x", 0o644)
    for rel in ("d/same.mu", "d/other.mu", "d/mode.mu"):
        writers.write_into(str(out), rel, b"port", src)
    os.chmod(out / "d" / "mode.mu", 0o600)
    before = {rel: os.stat(out / "d" / rel).st_ino for rel in ("same.mu", "other.mu", "mode.mu")}
    writers.forget_dirs()  # a new run: the folders are there already
    writers.write_into(str(out), "d/same.mu", b"port", src)
    writers.write_into(str(out), "d/other.mu", b"changed", src)
    writers.write_into(str(out), "d/mode.mu", b"port", src)
    assert os.stat(out / "d" / "same.mu").st_ino == before["same.mu"]  # not rewritten
    assert os.stat(out / "d" / "other.mu").st_ino != before["other.mu"]
    assert (out / "d" / "other.mu").read_bytes() == b"changed"
    assert stat.S_IMODE(os.stat(out / "d" / "mode.mu").st_mode) == 0o644
    assert _leftovers(out) == []


def test_a_target_taken_by_a_folder_fails_and_leaves_no_temporary(tmp_path):
    out = tmp_path / "out"
    (out / "d" / "a.mu").mkdir(parents=True)
    src = _src(tmp_path, "a.cu", b"x", 0o644)
    with pytest.raises(IsADirectoryError):
        writers.write_into(str(out), "d/a.mu", b"port", src)
    assert _leftovers(out) == [] and (out / "d" / "a.mu").is_dir()


def test_a_folder_taken_by_a_file_fails_with_the_systems_words(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "d").write_bytes(b"a file where a folder goes")
    src = _src(tmp_path, "a.cu", b"x", 0o644)
    with pytest.raises(FileExistsError):
        writers.write_into(str(out), "d/a.mu", b"port", src)
    with pytest.raises(NotADirectoryError):
        writers.write_into(str(out), "d/e/a.mu", b"port", src)


def test_a_leftover_temporary_is_neither_reused_nor_removed(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    leftover = out / f".musify-{os.getpid()}.tmp"
    leftover.write_bytes(b"from a killed run")
    src = _src(tmp_path, "a.cu", b"x", 0o644)
    writers.write_into(str(out), "a.mu", b"port", src)
    assert (out / "a.mu").read_bytes() == b"port"
    assert leftover.read_bytes() == b"from a killed run" and _leftovers(out) == [leftover.name]


def test_an_unwritable_folder_is_one_line_naming_the_file_and_the_run_goes_on(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    (tree / "locked").mkdir(parents=True)
    (tree / "locked" / "a.cu").write_text("void f() { cudaFree(0); }\n")
    (tree / "b.cu").write_text("void g() { cudaFree(0); }\n")
    out = tmp_path / "out"
    (out / "locked").mkdir(parents=True)
    os.chmod(out / "locked", 0o555)
    if ROOT:  # root may write anywhere: the folder refuses as it would refuse anyone else
        real_open = os.open

        def refusing(path, *a, **kw):
            if os.path.dirname(str(path)) == str(out / "locked"):
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, *a, **kw)

        monkeypatch.setattr(os, "open", refusing)
        monkeypatch.setattr(writers, "_CPORT", None)  # the compiled put opens below Python's os.open
    try:
        record, _ = migrate([str(tree)], Options(cache=False, jobs=1), "out", str(out))
    finally:
        monkeypatch.undo()
        os.chmod(out / "locked", 0o755)
    bad = [f for f in record.files if f.status == "failed"]
    assert [f.rel for f in bad] == ["locked/a.cu"]
    assert bad[0].error == "cannot write output: Permission denied"
    assert [d.id for d in bad[0].diagnostics] == ["MU0009"] and bad[0].diagnostics[0].path.endswith("locked/a.cu")
    assert b"musaFree" in (out / "b.mu").read_bytes() and record.exit_code != 0
    assert _leftovers(out) == []


def _corpus_run(out: Path, thread: bool, monkeypatch) -> tuple[dict, dict]:
    monkeypatch.setattr(pool, "THREAD", thread)
    record, _ = migrate([str(REPO / "corpora")], Options(cache=False, jobs=1), "out", str(out))
    d = record.to_json(deterministic=True)
    d.pop("output")
    tree = {}
    for p in sorted(out.rglob("*")):
        if p.is_symlink():
            tree[p.relative_to(out).as_posix()] = ("link", os.readlink(p))
        elif p.is_file():
            tree[p.relative_to(out).as_posix()] = (stat.S_IMODE(p.stat().st_mode), p.read_bytes())
    return tree, d


def test_the_writer_thread_gives_the_same_tree_and_record_as_inline_writes(tmp_path, monkeypatch):
    inline = _corpus_run(tmp_path / "inline", False, monkeypatch)
    threaded = _corpus_run(tmp_path / "thread", True, monkeypatch)
    assert len(inline[0]) > 100
    assert threaded == inline


def test_the_thread_holds_a_bounded_number_of_bytes(tmp_path, monkeypatch):
    src = _src(tmp_path, "a.cu", b"x", 0o644)
    writes = Writes(str(tmp_path / "out"))
    held = []  # bytes queued or being written when each batch is written
    real = writers.write_queued

    def slow(out_dir, queued):
        held.append(w.held + sum(len(data) for _, _, data, _, _ in queued))
        return real(out_dir, queued)

    monkeypatch.setattr(writers, "write_queued", slow)
    w = writer_thread.PortWriter(writes, max_bytes=3000, max_files=50)
    for i in range(40):
        w.put(i, f"d{i % 4}/f{i}.mu", bytes([65 + i % 26]) * 1000, src)
    w.put(40, "big.mu", b"B" * 10_000, src)  # bigger than the bound: taken alone
    w.close()
    assert writes.done == {i: None for i in range(41)}
    assert len(held) > 1 and max(held) <= 10_000 and max(held[:-1]) <= 3000
    assert (tmp_path / "out" / "d3" / "f39.mu").read_bytes() == b"N" * 1000


def test_a_bug_in_the_thread_is_raised_in_the_run_not_lost(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(6):
        (tree / f"k{i}.cu").write_text(f"void f{i}() {{ cudaFree(0); }}\n")
    real = writers.write_queued

    def broken(out_dir, queued):
        if any(rel == "k2.mu" for _, rel, *_ in queued):
            raise RuntimeError("a bug in the writer")
        return real(out_dir, queued)

    monkeypatch.setattr(writers, "write_queued", broken)
    monkeypatch.setattr(pool, "THREAD", True)
    with pytest.raises(RuntimeError, match="a bug in the writer"):
        migrate([str(tree)], Options(cache=False, jobs=1), "out", str(tmp_path / "out"))
    assert not [t for t in threading.enumerate() if t.name == "musify-port-writer"]


def test_a_run_stopped_early_leaves_only_whole_files_and_no_thread(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(30):
        (tree / f"k{i:02}.cu").write_text(f"void f{i}() {{ cudaFree(0); }}\n" * 200)
    monkeypatch.setattr(pool, "THREAD", True)
    monkeypatch.setattr(writer_thread, "BATCH", 2)  # written two by two: some before the interrupt

    def progress(result, done, total):
        if done == 12:
            # the interrupt comes once the thread has written something (under load it may not
            # have had the GIL yet: then the test would prove nothing about whole files)
            deadline = time.monotonic() + 10
            while not any(p.suffix == ".mu" for p in out.glob("*")) and time.monotonic() < deadline:
                time.sleep(0.01)
            raise KeyboardInterrupt

    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        migrate([str(tree)], Options(cache=False, jobs=1), "out", str(out), progress=progress)
    assert not [t for t in threading.enumerate() if t.name == "musify-port-writer"]
    names = sorted(p.name for p in out.iterdir())
    assert names and all(n.endswith(".mu") for n in names)  # no temporary left, nothing else
    for n in names:
        i = int(n[1:3])
        assert (out / n).read_bytes() == f"void f{i}() {{ musaFree(0); }}\n".encode() * 200


def test_a_copied_file_replaces_a_link_at_its_target_and_never_writes_through_it(tmp_path):
    """A file with nothing to migrate is copied through a temporary renamed into place: a link
    left at the target is replaced, the file it pointed to is untouched, and no temporary stays."""
    src = tmp_path / "src" / "notes.txt"
    src.parent.mkdir()
    src.write_bytes(b"plain text\n")
    os.chmod(src, 0o640)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"not yours\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").symlink_to(victim)
    writers.write_into(str(out), "notes.txt", None, str(src))
    assert not (out / "notes.txt").is_symlink()
    assert (out / "notes.txt").read_bytes() == b"plain text\n"
    assert stat.S_IMODE((out / "notes.txt").stat().st_mode) == 0o640
    assert victim.read_bytes() == b"not yours\n"
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
