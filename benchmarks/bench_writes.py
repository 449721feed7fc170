"""The output tree's writes, timed in one process (not a test: figures go to README.md).

    python benchmarks/bench_writes.py TREE [--baseline /work/main] [--repeat 4]

1. The write path alone: every file of TREE written as a port (`writers.write_into`) into a fresh
   folder, then again into the same folder (a re-run); with `--baseline`, that checkout's
   `musify/writers.py` is loaded beside this one and the two alternate.
2. The `-j1 -o` writer thread: `api.migrate` of TREE with the ports written by the thread and
   inline, alternated; wall time, the process's CPU and the main thread's CPU.
Each line says the load average: on a shared machine read the pairs, not the absolute times.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def write_path(tree: str, baseline: str | None, repeat: int, work: Path) -> None:
    from musify.discover import discover

    items = []
    for f in discover([tree]).files:
        if f.symlink is None and f.kind not in ("missing", "special"):
            with open(f.abspath, "rb") as fh:
                items.append((f.rel, fh.read(), f.abspath))
    variants = [("this", _load(REPO / "musify" / "writers.py", "writers_this"))]
    if baseline:
        variants.append(("baseline", _load(Path(baseline) / "musify" / "writers.py", "writers_baseline")))
    print(f"write path: {len(items)} ports")
    for rep in range(repeat):
        for name, w in variants if rep % 2 == 0 else variants[::-1]:
            out = work / f"{name}{rep}"
            w.forget_dirs()
            t, c = time.perf_counter(), _cpu()
            for rel, data, src in items:
                w.write_into(str(out), rel, data, src)
            t1, c1 = time.perf_counter(), _cpu()
            w.forget_dirs()
            for rel, data, src in items:
                w.write_into(str(out), rel, data, src)
            t2, c2 = time.perf_counter(), _cpu()
            print(f"  {name:8} fresh {t1 - t:6.3f} s wall {c1 - c:6.3f} s CPU | re-run {t2 - t1:6.3f} s wall "
                  f"{c2 - c1:6.3f} s CPU   load {os.getloadavg()[0]:.1f}", flush=True)
            shutil.rmtree(out)


def thread(tree: str, repeat: int, work: Path) -> None:
    from musify import api, pool
    from musify.options import Options

    options = Options(jobs=1, cache=False)
    api.migrate([tree], options, "out", str(work / "warm-up"))  # imports and rules, once
    shutil.rmtree(work / "warm-up")
    print("writer thread: api.migrate -j1 -o")
    for rep in range(repeat):
        for name in ("thread", "inline") if rep % 2 == 0 else ("inline", "thread"):
            out = work / f"{name}{rep}"
            pool.THREAD = name == "thread"
            t, c, m = time.perf_counter(), _cpu(), time.thread_time()
            api.migrate([tree], options, "out", str(out))
            print(f"  {name:8} {time.perf_counter() - t:6.2f} s wall {_cpu() - c:6.2f} s CPU, main thread "
                  f"{time.thread_time() - m:6.2f} s   load {os.getloadavg()[0]:.1f}", flush=True)
            shutil.rmtree(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree")
    ap.add_argument("--baseline", help="another musify checkout whose writers.py is timed beside this one")
    ap.add_argument("--repeat", type=int, default=4)
    ap.add_argument("--skip-thread", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-writes-") as tmp:
        write_path(args.tree, args.baseline, args.repeat, Path(tmp))
        if not args.skip_thread:
            thread(args.tree, args.repeat, Path(tmp))


if __name__ == "__main__":
    main()
