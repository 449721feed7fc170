"""The cyclic collector during a run (musify/collector.py): the long-lived objects are frozen
while files are migrated and given back afterwards; garbage made meanwhile is still collected;
the rules unpickle without a collection; the program (not a test) freezes all as it exits."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import weakref
from pathlib import Path

from musify import collector, pool
from musify.api import migrate
from musify.options import Options

REPO = Path(__file__).resolve().parents[1]


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_frozen_leaves_old_objects_out_and_gives_them_back():
    old = _Node()
    ref = weakref.ref(old)
    with collector.frozen():
        assert gc.get_freeze_count() > 0
        del old
        gc.collect()
        assert ref() is not None  # frozen: no collection inside reaches it
        young = _Node()
        young_ref = weakref.ref(young)
        del young
        gc.collect()
        assert young_ref() is None  # a cycle made inside is collected as before
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert ref() is None  # given back: collected once out


def test_frozen_makes_young_collections_only_and_restores_the_thresholds():
    before = gc.get_threshold()
    counts = {0: 0, 1: 0, 2: 0}

    def count(phase, info):
        if phase == "start":
            counts[info["generation"]] += 1

    gc.callbacks.append(count)
    try:
        with collector.frozen():
            assert gc.get_threshold()[0] == before[0]
            kept = [[_Node()] for _ in range(200_000)]  # survivors: each walked by one young collection only
            young = _Node()
            young_ref = weakref.ref(young)
            del young
            for _ in range(2_000):
                [_Node()]  # allocations enough for many young collections
        assert young_ref() is None
        assert counts[0] > 10 and counts[1] == counts[2] == 0
    finally:
        gc.callbacks.remove(count)
    del kept
    assert gc.get_threshold() == before


def test_paused_restores_the_collector_state():
    assert gc.isenabled()
    with collector.paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()  # off stays off
    finally:
        gc.enable()


def test_one_process_run_freezes_while_migrating_and_unfreezes(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    for n in range(3):
        (src / f"k{n}.cu").write_text("cudaMalloc(&p, 4);\n")
    seen = []
    real = pool.migrate_file_stated

    def counting(*args, **kwargs):
        seen.append(gc.get_freeze_count())
        return real(*args, **kwargs)

    monkeypatch.setattr(pool, "migrate_file_stated", counting)
    record, _ = migrate([str(src)], Options(jobs=1, cache=False), mode="out", out_dir=str(tmp_path / "out"))
    assert [f.status for f in record.files] == ["migrated"] * 3
    assert len(seen) == 3 and min(seen) > 0  # frozen for every file
    assert gc.get_freeze_count() == 0  # and given back after the run
    assert (tmp_path / "out" / "k0.mu").read_text() == "musaMalloc(&p, 4);\n"


def _frozen_at_exit(call: str) -> bool:
    # registered before main(): atexit runs the last registered first, so this runs after
    # whatever main() registered
    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
             "from musify.cli import main\n"
             "sys.argv = ['musify', '--version']\n"
             f"{call}\n")
    done = subprocess.run([sys.executable, "-c", probe], check=False, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return "frozen True" in done.stdout


def test_the_program_freezes_everything_as_it_exits():
    assert _frozen_at_exit("main()")
    assert not _frozen_at_exit("main(['--version'], standalone_mode=False)")  # a caller goes on


def _ended(body: str) -> subprocess.CompletedProcess:
    probe = ("import atexit, sys\nfrom musify import collector\n"
             "atexit.register(lambda: print('atexit ran'))\n"
             "print('before', end='; ')\n" + body + "\nprint('went on')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout a buffered pipe
    return subprocess.run([sys.executable, "-c", probe], check=False, cwd=REPO, capture_output=True, text=True,
                          timeout=60, env=env)


def test_exit_now_ends_with_the_code_after_the_atexit_functions_and_flushed_output():
    done = _ended("collector.exit_now(3)")
    assert done.returncode == 3 and done.stdout == "before; atexit ran\n"
    assert _ended("collector.exit_now(None)").returncode == 0


def test_exit_now_leaves_the_exit_to_python_where_that_is_safer():
    thread = "import threading, time\nthreading.Thread(target=time.sleep, args=(0.2,)).start()\n"
    for body in (thread + "collector.exit_now(3)", "collector.exit_now('a message')"):
        done = _ended(body)
        assert done.returncode == 0 and done.stdout == "before; went on\natexit ran\n"  # returned: a normal exit


def test_only_the_program_itself_counts_as_the_program():
    probe = "from musify import collector\nprint(collector.is_program())\n"
    as_c = subprocess.run([sys.executable, "-c", probe], check=False, cwd=REPO, capture_output=True, text=True)
    assert as_c.stdout.strip() == "False"
    version = subprocess.run([sys.executable, "-m", "musify", "--version"], check=False, cwd=REPO, capture_output=True,
                             text=True, env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"})
    assert version.returncode == 0 and version.stdout.startswith("musify, version")


def test_the_program_ended_by_exit_now_leaves_its_output_whole(tmp_path):
    """A big `--stdout` through a pipe and into a file, and the record: all there when the program
    ends without the interpreter's teardown (the same bytes as the command run in-process)."""
    from click.testing import CliRunner

    from musify.cli import main

    args = ["migrate", str(REPO / "corpora"), "--stdout", "-q", "--no-cache"]
    expected = CliRunner().invoke(main, [*args, "--json", str(tmp_path / "in.json")])
    assert expected.exit_code == 0 and len(expected.stdout_bytes) > 100_000
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    piped = subprocess.run([sys.executable, "-m", "musify", *args, "--json", str(tmp_path / "p.json")], check=False,
                           cwd=REPO,
                           capture_output=True, env=env, timeout=300)
    with open(tmp_path / "out", "wb") as out:
        to_file = subprocess.run([sys.executable, "-m", "musify", *args, "--json", str(tmp_path / "f.json")],
                                 check=False, cwd=REPO,
                                 stdout=out, stderr=subprocess.DEVNULL, env=env, timeout=300)
    assert piped.returncode == to_file.returncode == 0
    assert piped.stdout == (tmp_path / "out").read_bytes() == expected.stdout_bytes
    files = [[{k: v for k, v in f.items() if k != "seconds"} for f in json.loads((tmp_path / name).read_text())["files"]]
             for name in ("in.json", "p.json", "f.json")]
    assert files[0] and files[1] == files[0] and files[2] == files[0]


def test_the_program_started_with_stdout_closed_ends_as_python_would():
    """`musify ... >&-` (a daemon, a job runner): sys.stdout is None; the quick exit skips it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-m", "musify", "--version"], check=False, cwd=REPO, stderr=subprocess.PIPE,
                          text=True, env=env, preexec_fn=lambda: os.close(1), timeout=60)
    assert done.returncode == 0 and done.stderr == ""


def test_outlive_keeps_objects_only_in_the_program(monkeypatch):
    """A run's plan is kept until the exit in the program (never freed one by one), and let go
    as usual in any other process (a test, an API caller)."""

    class Plan:
        pass

    plan = Plan()
    gone = weakref.ref(plan)
    collector.outlive(plan)  # not the program: nothing kept
    del plan
    assert gone() is None
    monkeypatch.setattr(collector, "is_program", lambda: True)
    monkeypatch.setattr(collector, "_KEPT", [])
    plan = Plan()
    kept = weakref.ref(plan)
    collector.outlive(plan)
    del plan
    assert kept() is not None and collector._KEPT == [kept()]


def test_settled_leaves_what_it_made_old():
    """Objects made inside `settled` leave it in the oldest generation: the next young
    collection does not walk them (it walked a whole run's end steps once, 5 ms)."""
    with collector.settled():
        made = [[k] for k in range(2000)]
    young = {id(o) for o in gc.get_objects(generation=0)}
    assert gc.is_tracked(made[0]) and not any(id(x) in young for x in made)
    assert any(x is made[0] for x in gc.get_objects(generation=2))
