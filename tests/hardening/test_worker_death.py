"""A `-j` worker killed mid-run ends the run with one line and exit 3, never a hang.

Each case runs `musify migrate -j2` in a child Python whose workers are made to die at a chosen
moment (the pipe writes of multiprocessing's connections are wrapped before the pool forks them),
under a timeout: a run that hangs fails the test instead of the suite.
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
