"""The compiled port writer (musify/_cport.c, used by `writers.write_stated`): one call creates
the temporary, writes it and renames it into place, and must leave exactly what the Python path
(`writers._port_temp` and the rename) leaves, in success and in failure."""

from __future__ import annotations

import errno
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


def _ports(src: Path) -> list[tuple[str, bytes | None, str, os.stat_result | None]]:
    """Ports of every shape a batch meets: new nested folders (parents made on the way), a folder
    met again, a file at the top, an empty port, a copy (no new bytes), no source stat."""
    st = os.stat(src)
    return [("a/b/c/one.mu", b"one\n", str(src), st), ("a/b/c/two.muh", b"two" * 5000, str(src), st),
            ("a/top.mu", b"", str(src), st), ("top.mu", b"\xff\x00", str(src), st),
            ("a/b/copy.txt", None, str(src), st), ("d/nostat.mu", b"n", str(src), None),
            ("a/b/c/three.mu", b"three", str(src), st)]


def _ports_of_modes(tmp_path: Path, rel: str, data: bytes) -> list:
    """A port for each of seven sources of different modes (set-user-ID among them), over three
    folders: `rel` formatted with the folder's and the port's numbers, `data` with the port's
    (where it holds a %d)."""
    ports = []
    for k, mode in enumerate((0o644, 0o755, 0o600, 0o644, 0o4755, 0o640, 0o755)):
        src = tmp_path / f"s{k}.cu"
        src.write_bytes(b"x")
        os.chmod(src, mode)
        ports.append((rel.format(k % 3, k), data % k if b"%d" in data else data, str(src), os.stat(src)))
    return ports


def _queued_causes(out: str, ports: list) -> list:
    """`writers.write_queued` of `ports` queued as the writer thread queues them, as one cause each."""
    causes = [None] * len(ports)
    for k, cause in writers.write_queued(out, [(k, *port) for k, port in enumerate(ports)]):
        causes[k] = cause
    return causes


@needs_native
@pytest.mark.parametrize("mode", [0o644, 0o755, 0o600])
@pytest.mark.parametrize("before", ["empty", "rerun", "other"])
@pytest.mark.parametrize("how", ["many", "queued"])
def test_a_batch_writes_the_tree_one_by_one_writes_write(tmp_path, monkeypatch, mode, before, how):
    """`write_stated_many` (one `put_batch` call for what it can write) and `write_queued` (the
    writer thread's queue, by `put_ports`) leave the tree, and the causes, that `write_stated` file
    by file leaves: into a fresh tree, into the tree of an earlier run (identical ports left
    alone), and into a tree holding other files."""
    src = tmp_path / "src.cu"
    src.write_bytes(b"source\n")
    os.chmod(src, mode)
    trees, stamps = [], []
    for batched in (how, False):
        writers.forget_dirs()
        out = tmp_path / ("batched" if batched else "single")
        if before == "rerun":
            for rel, data, source, st in _ports(src):
                writers.write_stated(str(out), rel, data, source, st)
            writers.forget_dirs()
        elif before == "other":
            (out / "a" / "b" / "c").mkdir(parents=True)
            (out / "a" / "b" / "c" / "one.mu").write_bytes(b"old")
        for p in out.rglob("*"):  # dated back: a file written again gets another time, whatever the clock's grain
            if p.is_file():
                os.utime(p, ns=(10**18, 10**18))
        first = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
        ports = _ports(src)
        if batched == "many":
            causes = writers.write_stated_many(str(out), ports)
        elif batched == "queued":
            causes = _queued_causes(str(out), ports)
        else:
            causes = [writers._write_one(str(out), *port) for port in ports]
        assert causes == [None] * len(ports)
        trees.append(_tree(out))
        stamps.append({p.relative_to(out): p.stat().st_mtime_ns == t for p, t in first.items()})
    assert trees[0] == trees[1]
    assert stamps[0] == stamps[1]  # the same files left alone
    assert trees[0]["a/b/c/one.mu"] == (b"one\n", mode)
    assert not [n for n in trees[0] if ".musify-" in n]


@needs_native
def test_a_batch_answers_each_port(tmp_path):
    """put_batch: -1 written, -2 a taken temporary (nothing made), -3 a folder that was there
    (and every later port of it), (errno, path) a failure with nothing left behind; the folders
    it made, parents first."""
    there = tmp_path / "there"
    there.mkdir()
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / ".t").write_bytes(b"someone else's")
    (tmp_path / "busy.mu").mkdir()
    (tmp_path / "busy.mu" / "inside").write_text("x")  # a non-empty folder where a port should go
    new = tmp_path / "new" / "deep"

    def port(folder, name, ensure=True, tmp=".t"):
        return (str(folder), ensure, str(folder / tmp), str(folder / name), b"data", 0o644, 0o644, -1, -1)

    answers, made = cport.put_batch([port(new, "a.mu"), port(there, "b.mu"), port(new, "c.mu"),
                                     port(there, "d.mu"), port(tmp_path / "taken", "e.mu", False),
                                     port(tmp_path, "busy.mu", False)])
    assert answers[:5] == [-1, -3, -1, -3, -2]
    assert isinstance(answers[5], tuple) and answers[5][0] in (errno.EISDIR, errno.ENOTEMPTY)
    assert [os.fsdecode(m) for m in made] == [str(tmp_path / "new"), str(new)]
    assert (new / "a.mu").read_bytes() == b"data" and (new / "c.mu").read_bytes() == b"data"
    assert sorted(p.name for p in there.iterdir()) == [] and not (tmp_path / "taken" / "e.mu").exists()
    assert not (tmp_path / ".t").exists() and (tmp_path / "taken" / ".t").read_bytes() == b"someone else's"


@needs_native
def test_a_failed_port_in_a_batch_says_what_the_single_write_says(tmp_path):
    src = tmp_path / "src.cu"
    src.write_bytes(b"x")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.mu").mkdir()
    (tmp_path / "out" / "a.mu" / "inside").write_text("x")
    ports = [("a.mu", b"port", str(src), os.stat(src)), ("b.mu", b"port", str(src), os.stat(src))]
    writers.forget_dirs()
    writers._MADE[str(tmp_path / "out")] = True  # as if this run made it: the batch writes directly
    causes = writers.write_stated_many(str(tmp_path / "out"), ports)
    writers.forget_dirs()
    writers._MADE[str(tmp_path / "out")] = True
    queued = _queued_causes(str(tmp_path / "out"), ports)
    writers.forget_dirs()
    single = writers._write_one(str(tmp_path / "out"), *ports[0])
    assert causes[0] == queued[0] == single and single and causes[1] is None and queued[1] is None


@needs_native
def test_queued_ports_get_the_attributes_and_folders_of_single_writes(tmp_path):
    """`write_queued`: each port's mode and owner what `write_stated` gives its source's stat
    (another owner's too, set through the open file), the folders it made known to the run, and a
    port whose folder was there before looked at first as `write_stated` does."""
    writers.forget_dirs()
    ports = _ports_of_modes(tmp_path, "d{}/e/f{}.mu", b"y%d")
    ports.append(("d9/none.mu", b"z", str(tmp_path / "gone.cu"), None))
    fake = os.stat_result((0o100644, 1, 2, 1, os.getuid() + 1, os.getgid() + 1, 1, 0, 0, 0))
    ports.append(("d9/other.mu", b"z", str(tmp_path / "s0.cu"), fake))
    (tmp_path / "single" / "there").mkdir(parents=True)
    (tmp_path / "queued" / "there").mkdir(parents=True)
    ports.append(("there/was.mu", b"w", str(tmp_path / "s0.cu"), os.stat(tmp_path / "s0.cu")))
    singles = [writers._write_one(str(tmp_path / "single"), *port) for port in ports]
    writers.forget_dirs()
    queued = _queued_causes(str(tmp_path / "queued"), ports)
    assert queued == singles
    assert _tree(tmp_path / "queued") == _tree(tmp_path / "single")
    for rel, *_ in ports:
        a, b = os.stat(tmp_path / "single" / rel), os.stat(tmp_path / "queued" / rel)
        assert (a.st_mode, a.st_uid, a.st_gid) == (b.st_mode, b.st_uid, b.st_gid), rel
    assert writers._MADE[str(tmp_path / "queued" / "d0" / "e")] is True
    assert writers._MADE[str(tmp_path / "queued" / "there")] is False


def test_a_batch_gives_each_port_the_attributes_of_its_source(tmp_path, monkeypatch):
    """`write_stated_many` remembers a port's (first mode, mode, owner) by its source's mode and
    owner within a batch: each batched port still gets what `_attributes` gives its own stat."""
    seen: list[tuple] = []

    class Recorder:
        @staticmethod
        def put_batch(batch):
            seen.extend(batch)
            return [-1] * len(batch), []

    monkeypatch.setattr(writers, "_CPORT", Recorder)
    writers.forget_dirs()
    ports = _ports_of_modes(tmp_path, "d{}/f{}.mu", b"y")
    ports.append(("d9/none.mu", b"z", str(tmp_path / "gone.cu"), None))
    fake = os.stat_result((0o100644, 1, 2, 1, 4321, 4321, 1, 0, 0, 0))  # another owner's file
    ports.append(("d9/other.mu", b"z", str(tmp_path / "s0.cu"), fake))
    assert writers.write_stated_many(str(tmp_path / "out"), ports) == [None] * len(ports)
    assert len(seen) == len(ports)
    for item, (_, _, _, st) in zip(seen, ports):
        mode, owner, first = writers._attributes(st)
        assert item[5:] == (first, mode, *(owner if owner is not None else (-1, -1)))
