"""Inputs that used to hang, mislead or be skipped silently (issue 13, part 3)."""

from __future__ import annotations

import json
import os
import time

import pytest

from musify import discover as discover_mod
from musify.api import migrate
from musify.options import Options
from tests.hardening.conftest import cli

CUDA = b'#include <cuda_runtime.h>\nvoid f() { void *p; cudaMalloc(&p, 4); }\n'


def _ids(record, name):
    return [d.id for f in record.files if f.rel == name for d in f.diagnostics]


def test_fifo_is_reported_not_read(tmp_path, rules):
    os.mkfifo(tmp_path / "p.cu")
    (tmp_path / "a.cu").write_bytes(CUDA)
    t0 = time.monotonic()
    for mode, out in (("none", None), ("out", str(tmp_path.parent / (tmp_path.name + "-out")))):
        record, _ = migrate([str(tmp_path)], Options(), mode, out, ruleset=rules)
        assert _ids(record, "p.cu") == ["MU0012"]
        assert record.exit_code == 1
        assert [f.status for f in record.files if f.rel == "a.cu"] == ["migrated"]
    assert time.monotonic() - t0 < 60
    assert not os.path.exists(tmp_path.parent / (tmp_path.name + "-out") / "p.mu")


def test_unclosed_launches_finish_in_seconds(tmp_path, rules):
    body = b"k<<<grid, block\n" * 65536  # 1 MB of '<<<' that never close
    (tmp_path / "big.cu").write_bytes(b"__global__ void k();\n" + body)
    t0 = time.monotonic()
    record, _ = migrate([str(tmp_path)], Options(), "none", ruleset=rules)
    assert time.monotonic() - t0 < 60  # was: not finished after hours (quadratic)
    assert record.files[0].facts.get("launches", 0) == 0


def test_unclosed_function_bodies_finish_in_seconds(tmp_path, rules):
    """Every device function's body runs to the end of the file: finding each one's closing
    brace by a scan to the end was quadratic (about 13 minutes for 1 MB)."""
    body = b"__global__ void f() { if (threadIdx.x < 32) {\n" * 22000  # 1 MB, no brace ever closes
    (tmp_path / "big.cu").write_bytes(body)
    t0 = time.monotonic()
    record, _ = migrate([str(tmp_path)], Options(), "none", ruleset=rules)
    assert time.monotonic() - t0 < 60
    assert record.files[0].status in ("migrated", "unchanged")


def test_unlistable_directory_is_an_error(tmp_path, rules, monkeypatch):
    """Simulated: root ignores mode bits, so `os.scandir` is made to fail for one directory
    the way it fails for an unreadable one (PermissionError)."""
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.cu").write_bytes(CUDA)
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "b.cu").write_bytes(CUDA)
    real = os.scandir

    def scandir(path="."):
        if os.path.basename(str(path)) == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(discover_mod.os, "scandir", scandir)
    # the compiled walk lists without os.scandir (it declines a folder it cannot open, for real,
    # leaving it to this walk: test_unreadable_directory_really); the simulation needs the Python walk
    monkeypatch.setattr(discover_mod, "_NATIVE", None)
    record, _ = migrate([str(tmp_path)], Options(), "none", ruleset=rules)
    bad = [f for f in record.files if f.rel == "locked"]
    assert bad and bad[0].status == "failed" and "Permission denied" in bad[0].error
    assert [d.id for d in bad[0].diagnostics] == ["MU0013"]
    assert record.exit_code == 1


def test_unreadable_directory_really():
    """For real: a directory with mode 000, listed by an unprivileged user (as root, discovery
    runs in a child that drops to `nobody` first: root ignores mode bits)."""
    import subprocess
    import sys
    import tempfile

    from tests.hardening.conftest import REPO

    base = tempfile.mkdtemp(prefix="musify-unreadable-")
    try:
        os.chmod(base, 0o755)
        os.mkdir(os.path.join(base, "locked"), 0o755)
        with open(os.path.join(base, "locked", "b.cu"), "wb") as fh:
            fh.write(CUDA)
        os.chmod(os.path.join(base, "locked"), 0)
        code = ("import os, sys; from musify.discover import discover\n"
                "if os.geteuid() == 0: os.setgid(65534); os.setuid(65534)\n"  # imports done: now nobody
                "print([(f.rel, f.kind, f.error) for f in discover([sys.argv[1]]).files])")
        out = subprocess.run([sys.executable, "-c", code, base], capture_output=True, text=True, check=False,
                             env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=120)
        assert out.stdout.strip() == "[('locked', 'missing', 'cannot list directory: Permission denied')]", out.stderr
    finally:
        os.chmod(os.path.join(base, "locked"), 0o755)
        import shutil

        shutil.rmtree(base)


@pytest.mark.parametrize("codec,bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                                        ("utf-32-le", b"\xff\xfe\x00\x00")])
def test_wide_files_are_migrated_in_their_encoding(tmp_path, rules, codec, bom):
    text = "\ufeff// é\r\nvoid f() { void *p; cudaMalloc(&p, 4); }\r\n"
    (tmp_path / "w.cu").write_bytes(text.encode(codec))
    assert (tmp_path / "w.cu").read_bytes().startswith(bom)
    checked, _ = migrate([str(tmp_path)], Options(), "none", ruleset=rules)
    assert [f.status for f in checked.files] == ["migrated"]  # so `check` fails on it
    record, _ = migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)
    assert record.exit_code == 0
    assert (tmp_path / "w.mu").read_bytes() == text.replace("cudaMalloc", "musaMalloc").encode(codec)


def test_malformed_wide_file_fails_check(tmp_path, rules):
    (tmp_path / "w.cu").write_bytes(b"\xff\xfe" + "cudaMalloc".encode("utf-16-le") + b"\x00\xd8")  # lone surrogate
    record, _ = migrate([str(tmp_path)], Options(), "none", ruleset=rules)
    assert _ids(record, "w.cu") == ["MU0019"] and record.exit_code == 1


def test_empty_and_nul_files_same_decision_in_both_modes(tmp_path, rules):
    src = tmp_path / "src"
    src.mkdir()
    (src / "e.cuh").write_bytes(b"")
    (src / "n.cuh").write_bytes(b"x\0y")
    (src / "u.cu").write_bytes(b'#include "e.cuh"\n#include "n.cuh"\n')
    migrate([str(src)], Options(), "out", str(tmp_path / "out"), ruleset=rules)
    migrate([str(src)], Options(), "in-place", ruleset=rules)
    for tree in (tmp_path / "out", src):
        assert sorted(os.listdir(tree)) == ["e.muh", "n.cuh", "u.mu"]
        assert (tree / "u.mu").read_bytes() == b'#include "e.muh"\n#include "n.cuh"\n'


def test_symlinks_to_renamed_files_follow_them(tmp_path, rules):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "good.cu").write_bytes(CUDA)
    os.symlink("good.cu", src / "l.cu")
    os.symlink("../good.cu", src / "sub" / "up.cu")
    os.symlink("l.cu", src / "hop.cu")  # a link to a link: its hop is retargeted instead
    migrate([str(src)], Options(), "out", str(tmp_path / "out"), ruleset=rules)
    record, _ = migrate([str(src)], Options(), "in-place", ruleset=rules)
    for tree in (tmp_path / "out", src):
        assert os.readlink(tree / "l.cu") == "good.mu"
        assert os.readlink(tree / "sub" / "up.cu") == "../good.mu"
        assert os.readlink(tree / "hop.cu") == "l.cu"
        assert (tree / "hop.cu").read_bytes() == (tree / "good.mu").read_bytes()
    assert "MU0017" in _ids(record, "l.cu")


def test_control_characters_in_names_are_escaped(tmp_path):
    (tmp_path / "a\nb.cu").write_bytes(b"/* never closed cudaMalloc\n")
    (tmp_path / "t\x1b[2Jx.cu").write_bytes(b"cudaMalloc;\n")
    out = cli("check", str(tmp_path), "--json", str(tmp_path / "r.json"))
    lines = out.stderr.splitlines()
    assert not [ln for ln in lines if ln.startswith("b.cu")]  # the newline did not start a line
    assert all("\x1b" not in ln for ln in lines)
    assert any(ln.endswith("a\\nb.cu:1:1: error: MU0004: unterminated /* comment starting here; the rest of "
                           "the file is treated as comment") for ln in lines), lines
    assert any("t\\x1b[2Jx.cu: would be migrated (1 edits, renamed to t\\x1b[2Jx.mu)" in ln for ln in lines), lines
    record = json.loads((tmp_path / "r.json").read_text())
    assert all("\n" not in f["path"] and "\x1b" not in f["path"] for f in record["files"])
