"""The staged swap of --in-place (musify/swap.py): inodes and modes kept, a kill on either side of
the exchange finished by the next run, files someone else makes during the run kept, and the
file-by-file fallback where the swap is unsafe (MU0020)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from musify import swap
from musify.api import migrate
from musify.discover import JOURNAL_NAME
from musify.options import Options
from tests.hardening.treegen import missing_includes, read_tree

HEADER = b'#pragma once\nvoid f() { cudaFree(0); }\n'
SOURCE = b'#include "inc/a.cuh"\nvoid g() { void *p; cudaMalloc(&p, 4); }\n'


class Killed(BaseException):
    """Stands for SIGKILL at a chosen step (nothing after it runs; the lock's flock goes with it)."""


def _tree(tmp_path: Path) -> Path:
    t = tmp_path / "proj"
    (t / "inc").mkdir(parents=True)
    (t / "inc" / "a.cuh").write_bytes(HEADER)
    (t / "b.cu").write_bytes(SOURCE)
    (t / "README").write_bytes(b"unchanged\n")
    os.chmod(t / "README", 0o640)
    os.chmod(t / "b.cu", 0o750)
    os.chmod(t / "inc", 0o750)
    return t


def _port(tmp_path: Path, tree: Path, rules) -> dict[str, bytes]:
    out = tmp_path / "port"
    migrate([str(tree)], Options(), "out", str(out), ruleset=rules)
    return read_tree(out)


def _ids(record) -> list[str]:
    return [d.id for f in record.files for d in f.diagnostics]


def _stages(tmp_path: Path) -> list[str]:
    return [p.name for p in tmp_path.iterdir() if p.name.startswith(swap.STAGE_PREFIX)]


def test_swap_keeps_inodes_and_modes(tmp_path, rules):
    t = _tree(tmp_path)
    port = _port(tmp_path, t, rules)
    readme_ino, top_ino = (t / "README").stat().st_ino, t.stat().st_ino
    try:
        os.setxattr(t / "inc", "user.musify-test", b"kept")
        xattr = True
    except (OSError, AttributeError):
        xattr = False  # a file system without user extended attributes
    record, _ = migrate([str(t)], Options(), "in-place", ruleset=rules)
    assert record.exit_code == 0 and "MU0020" not in _ids(record)
    assert read_tree(t) == port
    assert t.stat().st_ino != top_ino  # the directory was exchanged, not edited
    assert (t / "README").stat().st_ino == readme_ino  # an unchanged file is the same inode
    assert stat.S_IMODE((t / "README").stat().st_mode) == 0o640
    assert stat.S_IMODE((t / "b.mu").stat().st_mode) == 0o750
    assert stat.S_IMODE((t / "inc").stat().st_mode) == 0o750
    if xattr:
        assert os.getxattr(t / "inc", "user.musify-test") == b"kept"
    assert _stages(tmp_path) == []


@pytest.mark.parametrize("step", ["flush", "exchange", "take_apart"])
def test_kill_at_each_step_then_resume(tmp_path, rules, monkeypatch, step):
    t = _tree(tmp_path)
    port = _port(tmp_path, t, rules)
    original = read_tree(t)
    real = getattr(swap, step)

    def killed(*args, **kwargs):  # take_apart: the exchange is done, the clean-up never starts
        if step == "exchange" and args[1] != str(t):
            return real(*args, **kwargs)  # the probe that renameat2 works here
        raise Killed

    monkeypatch.setattr(swap, step, killed)
    with pytest.raises(Killed):
        migrate([str(t)], Options(), "in-place", ruleset=rules)
    monkeypatch.setattr(swap, step, real)
    now = {k: v for k, v in read_tree(t).items() if not k.startswith(".musify")}
    assert now == (port if step == "take_apart" else original)  # one side or the other, never both names
    assert missing_includes(t, now) == []
    assert (t / JOURNAL_NAME).exists() and len(_stages(tmp_path)) == 1
    record, _ = migrate([str(t)], Options(), "in-place", ruleset=rules)
    assert record.exit_code == 0
    assert read_tree(t) == port  # finished; no journal, marker or lock left
    assert _stages(tmp_path) == []


def test_a_kill_while_probing_the_exchange_leaves_only_what_the_journal_names(tmp_path, rules, monkeypatch):
    """Whether renameat2 exchanges work is probed with two folders inside the journaled stage:
    a run killed between making them and removing them leaves a stage the next run knows and
    removes. (Probed beside the tree before the journal was written, such a kill left two empty
    `.musify-stage-*` folders for good: no later run knew they were musify's.)"""
    t = _tree(tmp_path)
    port = _port(tmp_path, t, rules)
    original = read_tree(t)
    real = swap.exchange

    def killed(a, b):
        if b != str(t):  # the probe: killed with both of its folders made, in the journal's stage
            assert os.path.isdir(a) and os.path.isdir(b)
            stage = os.path.dirname(a)
            assert os.path.dirname(b) == stage and os.path.dirname(stage) == str(tmp_path)
            assert f'"{os.path.basename(stage)}"' in (t / JOURNAL_NAME).read_text(encoding="utf-8")
            raise Killed
        return real(a, b)

    monkeypatch.setattr(swap, "exchange", killed)
    with pytest.raises(Killed):
        migrate([str(t)], Options(), "in-place", ruleset=rules)
    monkeypatch.setattr(swap, "exchange", real)
    assert {k: v for k, v in read_tree(t).items() if not k.startswith(".musify")} == original
    stages = _stages(tmp_path)
    assert len(stages) == 1 and (t / JOURNAL_NAME).exists()
    assert stages[0] in (t / JOURNAL_NAME).read_text(encoding="utf-8")  # the one stage left is the journal's
    record, _ = migrate([str(t)], Options(), "in-place", ruleset=rules)
    assert record.exit_code == 0 and read_tree(t) == port
    assert _stages(tmp_path) == []


def test_files_made_by_others_while_staging_are_carried_over(tmp_path, rules, monkeypatch):
    t = _tree(tmp_path)
    real = swap.build

    def meanwhile(st, ports, links):  # before the last check
        real(st, ports, links)
        (t / "inc" / "notes.txt").write_bytes(b"written during the run\n")
        tmp = t / "README.new"
        tmp.write_bytes(b"saved by an editor during the run\n")
        os.replace(tmp, t / "README")
        (t / "gone.txt").unlink()

    (t / "gone.txt").write_bytes(b"removed during the run\n")
    monkeypatch.setattr(swap, "build", meanwhile)
    record, _ = migrate([str(t)], Options(), "in-place", ruleset=rules)
    assert record.exit_code == 0
    assert (t / "inc" / "notes.txt").read_bytes() == b"written during the run\n"
    assert (t / "README").read_bytes() == b"saved by an editor during the run\n"
    assert not (t / "gone.txt").exists()  # not brought back by the exchange
    assert (t / "b.mu").exists() and _stages(tmp_path) == []


def test_files_made_by_others_at_the_exchange_are_kept(tmp_path, rules, monkeypatch):
    t = _tree(tmp_path)
    real = swap.flush

    def meanwhile(st):  # after the last check, just before the exchange
        (t / "notes.txt").write_bytes(b"written during the run\n")
        tmp = t / "README.new"
        tmp.write_bytes(b"saved by an editor during the run\n")
        os.replace(tmp, t / "README")
        real(st)

    monkeypatch.setattr(swap, "flush", meanwhile)
    record, _ = migrate([str(t)], Options(), "in-place", ruleset=rules)
    assert (t / "notes.txt").read_bytes() == b"written during the run\n"  # moved into the new tree
    kept = [p for s in _stages(tmp_path) for p in (tmp_path / s).rglob("*") if p.is_file()]
    assert [p.read_bytes() for p in kept] == [b"saved by an editor during the run\n"]
    assert "MU0021" in _ids(record) and record.exit_code != 0  # named, and the run fails
    assert (t / "b.mu").exists() and not (t / "b.cu").exists()


def test_file_changed_before_the_last_check_is_withheld_with_its_includers(tmp_path, rules, monkeypatch):
    t = _tree(tmp_path)
    real = swap.build

    def meanwhile(st, ports, links):
        real(st, ports, links)
        with open(t / "inc" / "a.cuh", "ab") as fh:
            fh.write(b"// edited during the run\n")

    monkeypatch.setattr(swap, "build", meanwhile)
    record, _ = migrate([str(t)], Options(), "in-place", ruleset=rules)
    ids = _ids(record)
    assert "MU0014" in ids and "MU0016" in ids and record.exit_code != 0
    tree = read_tree(t)
    assert tree["inc/a.cuh"].endswith(b"// edited during the run\n")  # the user's version
    assert "b.cu" in tree and "b.mu" not in tree and "inc/a.muh" not in tree
    assert missing_includes(t, tree) == []


def test_falls_back_when_renameat2_fails(tmp_path, rules, monkeypatch):
    t = _tree(tmp_path)
    port = _port(tmp_path, t, rules)

    def unsupported(a, b):
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    monkeypatch.setattr(swap, "exchange", unsupported)
    record, _ = migrate([str(t)], Options(), "in-place", ruleset=rules)
    assert "MU0020" in _ids(record) and record.exit_code == 0
    assert read_tree(t) == port and _stages(tmp_path) == []


def test_falls_back_beside_a_version_control_directory(tmp_path, rules):
    t = _tree(tmp_path)
    (t / ".git").mkdir()
    (t / ".git" / "HEAD").write_bytes(b"ref: refs/heads/main\n")
    record, _ = migrate([str(t)], Options(), "in-place", ruleset=rules)
    notes = [d.message for f in record.files for d in f.diagnostics if d.id == "MU0020"]
    assert len(notes) == 1 and "version-control" in notes[0]
    assert (t / "b.mu").exists() and (t / ".git" / "HEAD").exists() and _stages(tmp_path) == []


def test_current_directory_inside_the_tree_falls_back(tmp_path, rules, monkeypatch):
    t = _tree(tmp_path)
    monkeypatch.chdir(t / "inc")
    record, _ = migrate([str(t)], Options(), "in-place", ruleset=rules)
    assert "MU0020" in _ids(record)
    assert (t / "b.mu").exists() and os.getcwd() == str(t / "inc")


def test_no_renames_writes_file_by_file(tmp_path, rules):
    t = _tree(tmp_path)
    top = t.stat().st_ino
    record, _ = migrate([str(t)], Options(rename_files=False), "in-place", ruleset=rules)
    assert "MU0020" not in _ids(record) and t.stat().st_ino == top
    assert b"musaMalloc" in (t / "b.cu").read_bytes()
