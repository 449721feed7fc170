"""Start-up and first-run cost of the CLI (not a test: figures go to README.md).

Times, as the best of --repeat runs (wall and CPU of the child process):
  * `python -c pass`: the interpreter alone, the floor every command pays;
  * `musify --version`;
  * `musify check small.cu` warm: the rules already compiled, with the incremental cache
    (the file seen before) and with --no-cache (the rules loaded, the file migrated);
  * `musify check small.cu` cold: a fresh, empty cache root, as on a new machine. From a checkout
    the rules are compiled into the cache; an installed wheel ships them compiled.

    python benchmarks/bench_startup.py                      # this checkout
    python benchmarks/bench_startup.py --musify VENV/bin/musify   # an installed musify
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SMALL = """#include <cuda_runtime.h>
__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }
int main() { float *d; cudaMalloc(&d, 256); scale<<<1, 64>>>(d, 2.0f); cudaFree(d); return 0; }
"""


def timed(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def best(cmd: list[str], env: dict, cwd: Path, repeat: int) -> tuple[float, float]:
    runs = [timed(cmd, env, cwd) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--musify", help="an installed musify console script (default: python -m musify here)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    musify = [args.musify] if args.musify else [sys.executable, "-m", "musify"]
    work = Path(tempfile.mkdtemp(prefix="musify-startup-"))
    (work / "small.cu").write_text(SMALL)
    warm_cache = work / "warm-cache"
    env = dict(os.environ, MUSIFY_CACHE_DIR=str(warm_cache))
    # bytecode as a user has it (pip compiles an install; a checkout writes __pycache__ on first
    # import): without it every run recompiles every module and the figures say nothing
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not args.musify:
        env["PYTHONPATH"] = str(REPO)
    check = [*musify, "check", "small.cu", "-q"]
    subprocess.run(check, env=env, cwd=work, capture_output=True, check=False)  # compile rules, fill cache
    rows = [
        ("python -c pass", best([sys.executable, "-c", "pass"], env, work, args.repeat)),
        ("musify --version", best([*musify, "--version"], env, work, args.repeat)),
        ("musify check small.cu (warm, cached)", best(check, env, work, args.repeat)),
        ("musify check small.cu --no-cache (warm rules)", best([*check, "--no-cache"], env, work, args.repeat)),
    ]
    colds = []
    for i in range(max(1, args.repeat // 2)):
        cold_env = dict(env, MUSIFY_CACHE_DIR=str(work / f"cold-{i}"))
        colds.append(timed(check, cold_env, work))
    rows.append(("musify check small.cu (cold: empty cache root)", (min(c[0] for c in colds), min(c[1] for c in colds))))
    print(f"{'command':50s} {'wall s':>8s} {'CPU s':>8s}")
    for name, (wall, cpu) in rows:
        print(f"{name:50s} {wall:8.3f} {cpu:8.3f}")
    floor = rows[0][1]
    print(f"\nover the bare interpreter: --version +{rows[1][1][0] - floor[0]:.3f} s wall "
          f"(+{rows[1][1][1] - floor[1]:.3f} s CPU); check warm +{rows[2][1][0] - floor[0]:.3f} s wall; "
          f"cold minus warm (--no-cache): {rows[4][1][0] - rows[3][1][0]:+.3f} s wall")


if __name__ == "__main__":
    main()
