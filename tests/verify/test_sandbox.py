"""The sandbox contains hostile programs: writes outside the working directory, 50 children, 30 GB
of allocations, output without end, sockets, endless loops; each ends with a clear outcome and
leaves no process behind (docs/sandbox.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from musify.sandbox import Limits, _Tail, namespaces_available, run, workspace

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
needs_namespaces = pytest.mark.skipif(not namespaces_available(), reason="no unprivileged user namespaces here")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("hostile") / "hostile"
    subprocess.run(["gcc", "-O1", str(HERE / "hostile.c"), "-o", str(exe)], check=True)
    return exe


def _survivors(exe: Path) -> list[str]:
    """Processes still running the test program (none may outlive a run)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/exe") == str(exe):
                found.append(pid)
        except OSError:
            continue
    return found


def _run(exe: Path, *args: str, **limits) -> object:
    with workspace() as work:
        return run([str(exe), *args], work, Limits(**{"time": 5.0, **limits}))


@needs_namespaces
def test_a_write_outside_the_working_directory_fails(hostile, tmp_path):
    target = tmp_path / "escaped.txt"
    outcome = _run(hostile, "write", str(target))
    assert outcome.status == "exited" and outcome.returncode == 3
    assert "Read-only file system" in outcome.stderr
    assert not target.exists()


@needs_namespaces
def test_writes_inside_the_working_directory_work(hostile):
    with workspace() as work:
        outcome = run([str(hostile), "write", str(work / "also_inside.txt")], work, Limits(time=5))
        assert outcome.passed, outcome.stderr
        assert (work / "inside.txt").read_text() == "kept\n"


def test_fifty_children_are_gone_after_the_run(hostile):
    outcome = _run(hostile, "fork")
    assert outcome.passed and "forked 50" in outcome.stdout
    time.sleep(0.2)
    assert _survivors(hostile) == []


def test_children_are_killed_with_the_program_at_the_time_limit(hostile):
    t0 = time.monotonic()
    outcome = _run(hostile, "fork-wait", time=1.0)
    assert outcome.status == "timeout" and outcome.returncode == 124
    assert "did not finish within 1 s" in outcome.reason(Limits(time=1.0))
    assert time.monotonic() - t0 < 15
    time.sleep(0.2)
    assert _survivors(hostile) == []


def test_thirty_gigabytes_hit_the_memory_limit(hostile):
    outcome = _run(hostile, "alloc", memory=256 << 20, time=30)
    assert outcome.status == "memory-limit", (outcome.status, outcome.stderr)
    assert "allocated 30 GB" not in outcome.stdout
    assert "memory limit (256 MiB)" in outcome.reason(Limits(memory=256 << 20))


def test_output_without_end_is_stopped_and_bounded(hostile):
    outcome = _run(hostile, "print", output=8 << 20, keep=64 << 10)
    assert outcome.status == "output-limit"
    assert outcome.stdout_bytes > 8 << 20
    assert len(outcome.stdout) < 80 << 10 and "bytes of output not kept" in outcome.stdout
    assert _survivors(hostile) == []


@needs_namespaces
def test_a_socket_cannot_reach_the_network(hostile):
    outcome = _run(hostile, "socket")
    assert outcome.returncode == 6 and "connect" in outcome.stderr and "connected" not in outcome.stdout
    assert outcome.isolation == "namespaces"


def test_an_endless_loop_is_stopped(hostile):
    outcome = _run(hostile, "loop", time=1.0)
    assert outcome.timed_out and _survivors(hostile) == []


def test_without_namespaces_the_group_is_still_killed(hostile):
    outcome = _run(hostile, "fork-wait", time=1.0, isolate="none")
    assert outcome.status == "timeout" and outcome.isolation == "process-group"
    time.sleep(0.2)
    assert _survivors(hostile) == []


def test_environment_is_cleaned(monkeypatch, tmp_path):
    monkeypatch.setenv("SECRET_TOKEN", "do-not-leak")
    with workspace() as work:
        outcome = run(["/usr/bin/env"], work, Limits(time=5))
    assert "SECRET_TOKEN" not in outcome.stdout and f"HOME={work}" in outcome.stdout


def test_tail_keeps_head_and_tail_and_counts_the_rest():
    t = _Tail(10)
    for chunk in (b"abcdefgh", b"ijklmnop", b"qrstuvwxyz"):
        t.add(chunk)
    assert t.total == 26
    text = t.text()
    assert text.startswith("abcde") and text.endswith("vwxyz") and "16 bytes of output not kept" in text


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_the_compiler_has_a_time_limit_too(tmp_path):
    """`#include "fifo.h"` of a FIFO blocks the compiler forever; the build is stopped instead."""
    from musify.emu.build import BuildError, BuildOptions, build

    os.mkfifo(tmp_path / "fifo.h")
    (tmp_path / "prog.cpp").write_text('#include "fifo.h"\nint main() { return 0; }\n')
    t0 = time.monotonic()
    with pytest.raises(BuildError, match="the compiler did not finish within 2 s"):
        build([tmp_path / "prog.cpp"], BuildOptions(compile_timeout=2))
    assert time.monotonic() - t0 < 30


def test_kill_all_stops_runs_in_progress(hostile):
    """What Ctrl-C in verify does: every run in flight ends at once, no process is left."""
    import threading

    from musify.sandbox import kill_all

    results = []
    with workspace() as work:
        t = threading.Thread(target=lambda: results.append(run([str(hostile), "fork-wait"], work, Limits(time=60))))
        t.start()
        time.sleep(1.0)
        t0 = time.monotonic()
        kill_all()
        t.join(30)
    assert results and results[0].status == "signal" and time.monotonic() - t0 < 10
    time.sleep(0.2)
    assert _survivors(hostile) == []
