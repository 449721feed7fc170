"""A `-j` worker killed mid-run ends the run with one line and exit 3 (or, once every result
is in, lets it complete), never a hang.

Each case runs `musify migrate -j2` in a child Python whose workers are made to die at a chosen
moment (the pipe writes of multiprocessing's connections, or its reads and the executor's
shutdown, are wrapped before the pool forks them), under a timeout: a run that hangs fails the test instead of the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KERNEL = "#include <cuda_runtime.h>\n__global__ void k{i}(float* x) {{ x[threadIdx.x] = {i}; }}\n" \
         "void run{i}(float* d) {{ cudaMalloc(&d, 4); k{i}<<<1, 1>>>(d); cudaFree(d); }}\n"

# the child: `how` says when a worker kills itself; every message a worker sends is logged by size
CHILD = textwrap.dedent("""
    import os, select, signal, struct, sys
    from multiprocessing import connection

    how, log = sys.argv[1], sys.argv[2]
    parent = os.getpid()
    sent = []
    real = connection.Connection._send_bytes

    def send(self, buf):
        if os.getpid() == parent:
            return real(self, buf)
        n = len(buf)
        sent.append(n)
        with open(log, "a") as fh:
            fh.write(f"{n}\\n")
        if how == "cut" and n + 4 > select.PIPE_BUF:  # a message no single write can carry
            self._send(struct.pack("!i", n) + bytes(buf)[: n // 2])  # half of it, then killed
            os.kill(os.getpid(), signal.SIGKILL)
        if how == "between" and len(sent) == 2:  # killed between two whole messages
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, buf)

    connection.Connection._send_bytes = send

    if how == "idle":  # a worker killed waiting for work (the task queue's lock held) as the pool closes
        import time
        from concurrent.futures import process

        real_recv = connection.Connection._recv_bytes
        waiting = log + ".waiting"

        def recv(self, maxsize=None):  # in a worker, only the holder of the task queue's lock reads
            if os.getpid() == parent:
                return real_recv(self, maxsize)
            with open(f"{waiting}.{os.getpid()}", "w") as fh:  # whole, or not there, for the reader
                fh.write(str(os.getpid()))
            os.replace(f"{waiting}.{os.getpid()}", waiting)
            return real_recv(self, maxsize)

        connection.Connection._recv_bytes = recv
        real_stop = process._ExecutorManagerThread.shutdown_workers

        def stop(self):  # every result is in; before the workers are told to leave
            victim = int(open(waiting).read())
            os.kill(victim, signal.SIGKILL)
            while True:  # dead: a zombie, or already reaped by the run's own wait for its workers
                try:
                    if open(f"/proc/{victim}/stat").read().rsplit(")", 1)[1].split()[0] == "Z":
                        break
                except FileNotFoundError:
                    break
                time.sleep(0.01)
            open(log + ".killed", "w").close()
            return real_stop(self)

        process._ExecutorManagerThread.shutdown_workers = stop

    from musify.cli import main
    main(sys.argv[3:])
""")


def _run(tmp_path: Path, how: str) -> tuple[subprocess.CompletedProcess, list[int]]:
    tree = tmp_path / "tree"
    for i in range(200):
        sub = tree / f"dir{i % 5}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"k{i}.cu").write_text(KERNEL.format(i=i))
    log = tmp_path / "sent.txt"
    temp = tmp_path / "temp"  # the run's temporary folder: what its workers' results leave there
    temp.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(temp))
    args = [sys.executable, "-c", CHILD, how, str(log), "migrate", str(tree), "-o", str(tmp_path / "out"),
            "-j2", "--no-cache", "-q"]
    try:
        done = subprocess.run(args, check=False, capture_output=True, text=True, env=env, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"musify -j2 hung after a worker was killed ({how})")
    sizes = [int(n) for n in log.read_text().split()] if log.exists() else []
    return done, sizes


def test_no_worker_message_can_be_cut_in_half_by_a_kill(tmp_path):
    """A worker killed halfway through a message would leave the pool's reading thread waiting
    for the rest forever: every message fits in one atomic pipe write, so none ever needs the
    kill this child deals out, and the run completes."""
    done, sizes = _run(tmp_path, "cut")
    assert done.returncode == 0, done.stderr
    assert sizes and max(sizes) + 4 <= __import__("select").PIPE_BUF
    assert len(list((tmp_path / "out").rglob("*.mu"))) == 200
    assert list((tmp_path / "temp").iterdir()) == []


def test_a_killed_worker_ends_the_run_with_one_line(tmp_path):
    done, _ = _run(tmp_path, "between")
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "a worker process died" in lines[0]
    assert list((tmp_path / "temp").iterdir()) == []  # the results' folder went with the run


def test_a_worker_killed_while_idle_at_the_end_leaves_the_run_complete(tmp_path):
    """Every result is in when a worker dies waiting for more work, holding the task queue's
    lock, just as the pool is told to close: the other worker can then never read its note to
    leave, and the executor's shutdown waited for it forever (seen under load in test_kill.py).
    The run closes its pool itself: it completes, exit 0."""
    done, _ = _run(tmp_path, "idle")
    assert (tmp_path / "sent.txt.killed").exists(), done.stderr  # the kill this case is about happened
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "out").rglob("*.mu"))) == 200
    assert list((tmp_path / "temp").iterdir()) == []
