"""No lost writes in --in-place (issue 13, part 2): a file changed or removed while the run was
busy elsewhere is left as the user's; a second run on the same tree waits or refuses; owner,
mode and hard links are kept; musify's own leftovers are cleaned; failures are one line."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from musify import journal, pool
from musify.api import migrate
from musify.options import Options
from tests.hardening.conftest import REPO, cli
from tests.hardening.treegen import make_tree, read_tree

CUDA = b'#include "h.cuh"\nvoid f() { void *p; cudaMalloc(&p, 4); }\n'


def _append(path, data):
    with open(path, "ab") as fh:
        fh.write(data)


def _read(path):
    with open(path) as fh:
        return fh.read()


def _during(monkeypatch, when_rel, action):
    """Run `action` right after the file `when_rel` has been migrated (before any write)."""
    real = pool.migrate_file_stated

    def wrapped(job, *a):
        out = real(job, *a)
        if job.rel == when_rel:
            action()
        return out

    monkeypatch.setattr(pool, "migrate_file_stated", wrapped)


def test_file_changed_during_the_run_is_not_overwritten(tmp_path, rules, monkeypatch):
    alone = CUDA.split(b"\n", 1)[1]  # includes no header
    (tmp_path / "a.cu").write_bytes(alone)
    (tmp_path / "b.cu").write_bytes(CUDA)
    (tmp_path / "h.cuh").write_bytes(b"cudaError_t g();\n")
    _during(monkeypatch, "b.cu", lambda: _append(tmp_path / "a.cu", b"// my new line\n"))
    record, _ = migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)
    a = next(f for f in record.files if f.rel == "a.cu")
    assert a.status == "failed" and [d.id for d in a.diagnostics] == ["MU0014"]
    assert (tmp_path / "a.cu").read_bytes() == alone + b"// my new line\n"  # the user's edit survives
    assert not (tmp_path / "a.mu").exists()
    assert b"musaMalloc" in (tmp_path / "b.mu").read_bytes()
    assert record.exit_code == 1


def test_an_unwritten_file_keeps_the_headers_it_includes(tmp_path, rules, monkeypatch):
    """a.cu (edited by the user during the run) still includes h.cuh by that name, so h.cuh is
    not renamed, and so b.cu's port (which would include h.muh) is not written either."""
    (tmp_path / "a.cu").write_bytes(CUDA)
    (tmp_path / "b.cu").write_bytes(CUDA)
    (tmp_path / "h.cuh").write_bytes(b"cudaError_t g();\n")
    _during(monkeypatch, "b.cu", lambda: _append(tmp_path / "a.cu", b"// my new line\n"))
    record, _ = migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)
    assert sorted(os.listdir(tmp_path)) == ["a.cu", "b.cu", "h.cuh"]
    assert {f.rel: [d.id for d in f.diagnostics] for f in record.files} == {
        "a.cu": ["MU0014"], "b.cu": ["MU0016"], "h.cuh": ["MU0016"]}


def test_file_removed_during_the_run_does_not_come_back(tmp_path, rules, monkeypatch):
    (tmp_path / "a.cu").write_bytes(CUDA)
    (tmp_path / "b.cu").write_bytes(CUDA)
    (tmp_path / "h.cuh").write_bytes(b"cudaError_t g();\n")
    (tmp_path / "a.cu").write_bytes(CUDA.split(b"\n", 1)[1])
    _during(monkeypatch, "b.cu", lambda: os.unlink(tmp_path / "a.cu"))
    record, _ = migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)
    assert sorted(os.listdir(tmp_path)) == ["b.mu", "h.muh"]
    assert [d.id for f in record.files if f.rel == "a.cu" for d in f.diagnostics] == ["MU0008"]


def test_header_changed_during_the_run_keeps_its_includers_consistent(tmp_path, rules, monkeypatch):
    """h.cuh cannot be renamed (the user edited it), so a.cu's port, which would include h.muh,
    is not written either: no include may name a missing file."""
    (tmp_path / "a.cu").write_bytes(CUDA)
    (tmp_path / "h.cuh").write_bytes(b"cudaError_t g();\n")
    _during(monkeypatch, "h.cuh", lambda: _append(tmp_path / "h.cuh", b"// edit\n"))
    record, _ = migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)
    assert sorted(os.listdir(tmp_path)) == ["a.cu", "h.cuh"]
    assert {f.rel: [d.id for d in f.diagnostics] for f in record.files} == {"a.cu": ["MU0016"], "h.cuh": ["MU0014"]}
    monkeypatch.undo()
    again, _ = migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)  # the next run finishes
    assert again.exit_code == 0 and sorted(os.listdir(tmp_path)) == ["a.mu", "h.muh"]


def test_a_second_run_refuses_or_waits(tmp_path, rules):
    (tmp_path / "a.cu").write_bytes(CUDA)
    (tmp_path / "h.cuh").write_bytes(b"\n")
    held = journal.acquire(str(tmp_path), 0)  # another run holds the tree
    try:
        out = cli("migrate", "--in-place", "--lock-wait", "0", str(tmp_path))
        assert out.returncode == 2
        assert out.stderr.strip().splitlines() == [
            (f"musify: error: {tmp_path}: another musify --in-place run is writing this tree (process {os.getpid()}); "
             "try again when it has finished")]
        assert sorted(os.listdir(tmp_path)) == [".musify.lock", "a.cu", "h.cuh"]
        threading.Timer(0.5, journal.release, (held,)).start()
        record, _ = migrate([str(tmp_path)], Options(lock_wait=30), "in-place", ruleset=rules)
    finally:
        if os.path.exists(tmp_path / ".musify.lock"):
            journal.release(held)
    assert record.exit_code == 0 and sorted(os.listdir(tmp_path)) == ["a.mu", "h.muh"]


def test_two_concurrent_runs_give_a_correct_tree_and_no_false_errors(tmp_path, rules):
    src = tmp_path / "src"
    make_tree(src, 150)
    migrate([str(src)], Options(), "out", str(tmp_path / "out"), ruleset=rules)
    tree = tmp_path / "tree"
    subprocess.run(["cp", "-r", str(src), str(tree)], check=True)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    runs = [subprocess.Popen([sys.executable, "-m", "musify", "migrate", "-q", "--in-place", "--lock-wait", "300",
                              str(tree)], stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    errs = [p.communicate(timeout=600)[1] for p in runs]
    assert [p.returncode for p in runs] == [0, 0], errs
    assert [e for e in errs if "error" in e] == []
    assert read_tree(tree) == read_tree(tmp_path / "out")


def test_owner_mode_and_hard_links(tmp_path, rules):
    (tmp_path / "a.cu").write_bytes(CUDA)
    (tmp_path / "h.cuh").write_bytes(b"\n")
    os.chmod(tmp_path / "a.cu", 0o640)
    if os.geteuid() == 0:
        os.chown(tmp_path / "a.cu", 1234, 4321)
    (tmp_path / "k.cu").write_bytes(CUDA.split(b"\n", 1)[1])
    os.link(tmp_path / "k.cu", tmp_path / "k2.cpp")
    record, _ = migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)
    st = os.stat(tmp_path / "a.mu")
    assert oct(st.st_mode & 0o777) == "0o640"
    if os.geteuid() == 0:
        assert (st.st_uid, st.st_gid) == (1234, 4321)
    k = next(f for f in record.files if f.rel == "k.cu")
    assert [d.id for d in k.diagnostics] == ["MU0015"] and k.status == "failed"
    assert b"cudaMalloc" in (tmp_path / "k.cu").read_bytes() and os.stat(tmp_path / "k.cu").st_nlink == 2


def test_rename_collision_is_an_error_and_nothing_is_overwritten(tmp_path, rules):
    (tmp_path / "a.cu").write_bytes(CUDA)
    (tmp_path / "a.mu").write_bytes(b"// someone's own MUSA file\n")
    (tmp_path / "h.cuh").write_bytes(b"\n")
    record, _ = migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)
    a = next(f for f in record.files if f.rel == "a.cu")
    assert "MU0011" in [d.id for d in a.diagnostics] and record.exit_code == 1
    assert (tmp_path / "a.mu").read_bytes() == b"// someone's own MUSA file\n"
    assert b"musaMalloc" in (tmp_path / "a.cu").read_bytes()  # migrated under its old name


def test_leftovers_of_a_killed_run_are_cleaned(tmp_path, rules):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".musify-123_abc.tmp").write_bytes(b"half a file")
    (tmp_path / "sub" / "a.cu").write_bytes(CUDA)
    (tmp_path / "sub" / "h.cuh").write_bytes(b"\n")
    (tmp_path / "keep.tmp").write_bytes(b"not ours")
    migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)
    assert sorted(os.listdir(tmp_path / "sub")) == ["a.mu", "h.muh"]
    assert sorted(os.listdir(tmp_path)) == ["keep.tmp", "sub"]


def test_interrupted_pair_is_finished_not_taken_for_a_collision(tmp_path, rules):
    """The state a kill between 'new name linked' and 'old name removed' leaves."""
    (tmp_path / "a.cu").write_bytes(CUDA)
    (tmp_path / "h.cuh").write_bytes(b"cudaError_t g();\n")
    os.link(tmp_path / "h.cuh", tmp_path / "h.muh")
    (tmp_path / ".musify-journal.json").write_text(
        '{"schema": "musify-journal/1", "pid": 1, "renames": [["h.cuh", "h.muh"]], "rewrites": [], "links": []}')
    record, _ = migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)
    assert record.exit_code == 0, [d.console() for f in record.files for d in f.diagnostics]
    assert sorted(os.listdir(tmp_path)) == ["a.mu", "h.muh"]
    assert b"musaError_t" in (tmp_path / "h.muh").read_bytes()
    assert (tmp_path / "a.mu").read_bytes().startswith(b'#include "h.muh"')


@pytest.mark.parametrize("linking", ["h.muh", "h.cuh"], ids=["new name", "old name"])
def test_a_kill_inside_a_link_leaves_a_temporary_link_the_next_run_removes(tmp_path, rules, linking):
    """A file-by-file run killed while giving a file a name (between making its temporary link
    and renaming it over the name) leaves `.musify-*.tmp` as a second link to that file. The next
    run removes it, which changes the file's link count and change time: it must not take its
    own clean-up for a user's edit (MU0014) and hold back the file and its includers (MU0016),
    leaving the journal behind. The state is made by a real run, stopped at that moment."""
    (tmp_path / ".git").mkdir()  # beside a .git directory the run commits file by file
    (tmp_path / "a.cu").write_bytes(CUDA)
    (tmp_path / "h.cuh").write_bytes(b"cudaError_t g();\n")
    pid = os.fork()
    if pid == 0:  # the run that is killed: os._exit leaves the tree as SIGKILL would
        try:
            real = os.replace

            def replace(src, dst):
                if os.path.basename(src).startswith(".musify-") and os.path.basename(dst) == linking:
                    os._exit(9)
                real(src, dst)

            os.replace = replace
            migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9, "the run was not stopped inside the link"
    temps = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert len(temps) == 1 and os.stat(tmp_path / temps[0]).st_nlink == 2  # a second name of a file
    assert (tmp_path / ".musify-journal.json").exists()
    record, _ = migrate([str(tmp_path)], Options(), "in-place", ruleset=rules)
    assert record.exit_code == 0, [d.console() for f in record.files for d in f.diagnostics]
    assert sorted(os.listdir(tmp_path)) == [".git", "a.mu", "h.muh"]
    assert (tmp_path / "a.mu").read_bytes() == CUDA.replace(b"h.cuh", b"h.muh").replace(b"cudaMalloc", b"musaMalloc")
    assert (tmp_path / "h.muh").read_bytes() == b"musaError_t g();\n"


def test_a_run_on_part_of_an_interrupted_tree_refuses(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.cu").write_bytes(CUDA)
    (tmp_path / ".musify-journal.json").write_text('{"schema": "musify-journal/1", "renames": []}')
    out = cli("migrate", "--in-place", str(tmp_path / "sub"))
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "an interrupted --in-place run must be finished first" in out.stderr


def test_killing_the_parent_leaves_no_worker(tmp_path):
    make_tree(tmp_path, 400)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.Popen([sys.executable, "-m", "musify", "check", "-q", "-j", "2", str(tmp_path)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    workers: list[int] = []
    deadline = time.monotonic() + 120
    while not workers and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.02)
        try:
            workers = [int(x) for x in _read(f"/proc/{p.pid}/task/{p.pid}/children").split()]
        except OSError:
            break
    p.kill()
    p.wait()
    assert workers, "the run ended before its pool started"
    time.sleep(0.5)
    alive = [w for w in workers if os.path.exists(f"/proc/{w}") and _read(f"/proc/{w}/stat").rsplit(")", 1)[1].split()[0] != "Z"]
    assert alive == []


def test_json_lite_in_place_writes_the_ports(tmp_path, rules):
    (tmp_path / "a.cu").write_bytes(CUDA)
    (tmp_path / "h.cuh").write_bytes(b"cudaError_t g();\n")
    record, _ = migrate([str(tmp_path)], Options(json_lite=True), "in-place", ruleset=rules)
    assert record.exit_code == 0
    assert (tmp_path / "a.mu").read_bytes() == CUDA.replace(b"h.cuh", b"h.muh").replace(b"cudaMalloc", b"musaMalloc")
    assert (tmp_path / "h.muh").read_bytes() == b"musaError_t g();\n"
