"""The compiled port writer (musify/_cport.c, used by `writers.write_stated`): one call creates
the temporary, writes it and renames it into place, and must leave exactly what the Python path
(`writers._port_temp` and the rename) leaves, in success and in failure."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from musify import writers

REPO = Path(__file__).resolve().parents[1]
cport = writers._CPORT
needs_native = pytest.mark.skipif(cport is None, reason="musify._cport not built (or MUSIFY_PURE_PYTHON set)")


@pytest.fixture(autouse=True)
def _new_run():
    writers.forget_dirs()
    yield
    writers.forget_dirs()


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
            for p in sorted(root.rglob("*")) if p.is_file()}


@needs_native
@pytest.mark.parametrize("mode", [0o644, 0o755, 0o600, 0o640])
def test_both_paths_write_the_same_tree(tmp_path, monkeypatch, mode):
    src = tmp_path / "a.cu"
    src.write_bytes(b"x")
    os.chmod(src, mode)
    trees = []
    for native in (True, False):
        monkeypatch.setattr(writers, "_CPORT", cport if native else None)
        writers.forget_dirs()
        out = tmp_path / ("native" if native else "python")
        for rel, data in (("a.mu", b"port\n"), ("d/e/b.mu", b""), ("d/c.muh", b"\xff\x00bytes" * 1000)):
            writers.write_stated(str(out), rel, data, str(src), os.stat(src))
        writers.write_stated(str(out), "a.mu", b"again\n", str(src), os.stat(src))  # over an existing port
        trees.append(_tree(out))
    assert trees[0] == trees[1]
    assert trees[0]["a.mu"] == (b"again\n", mode)
    assert not [n for t in trees for n in t if ".musify-" in n]  # no temporary left


@needs_native
def test_put_reports_a_taken_temporary_name_and_makes_nothing(tmp_path):
    tmp, dst = tmp_path / ".musify-1.tmp", tmp_path / "a.mu"
    tmp.write_bytes(b"someone else's")
    assert cport.put(str(tmp), str(dst), b"port", 0o644, 0o644, -1, -1) == -2
    assert tmp.read_bytes() == b"someone else's" and not dst.exists()


@needs_native
def test_put_hands_back_the_descriptor_when_the_mode_is_not_yet_right(tmp_path):
    tmp, dst = tmp_path / ".musify-1.tmp", tmp_path / "a.mu"
    fd = cport.put(str(tmp), str(dst), b"port", 0o600, 0o755, -1, -1)  # created 0600, to become 0755
    assert fd >= 0 and not dst.exists() and tmp.read_bytes() == b"port"
    os.close(fd)


@needs_native
def test_a_failed_rename_removes_the_temporary_and_says_why(tmp_path):
    (tmp_path / "a.mu").mkdir()
    (tmp_path / "a.mu" / "inside").write_text("x")  # a non-empty folder where the port should go
    tmp = tmp_path / ".musify-1.tmp"
    with pytest.raises(OSError) as caught:
        cport.put(str(tmp), str(tmp_path / "a.mu"), b"port", 0o644, 0o644, -1, -1)
    assert caught.value.strerror and not tmp.exists()


@needs_native
def test_a_failed_write_removes_the_temporary(tmp_path):
    # a file size limit makes the write fail (EFBIG) after the create succeeded
    probe = ("import os, resource, signal, sys\n"
             "from musify import _cport\n"
             "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
             "resource.setrlimit(resource.RLIMIT_FSIZE, (10, 10))\n"
             "tmp, dst = sys.argv[1] + '/.musify-1.tmp', sys.argv[1] + '/a.mu'\n"
             "try:\n"
             "    _cport.put(tmp, dst, b'x' * 1000, 0o644, 0o644, -1, -1)\n"
             "except OSError as exc:\n"
             "    print('failed', exc.strerror, os.path.exists(tmp), os.path.exists(dst))\n")
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], check=False, cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("failed") and done.stdout.rstrip().endswith("False False"), done.stdout + done.stderr


def test_the_pure_python_switch_turns_the_native_writer_off():
    probe = "from musify import writers; print(writers._CPORT is None)"
    env = {**os.environ, "MUSIFY_PURE_PYTHON": "1"}
    done = subprocess.run([sys.executable, "-c", probe], check=False, cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True"
