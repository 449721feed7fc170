"""In-place cost and single-file memory (issue 13): not a test, figures go to README.md.

    python benchmarks/bench_hardening.py small --files 20000   # -o against --in-place, tiny files
    python benchmarks/bench_hardening.py big --mb 50           # peak RSS migrating one 50 MB file

`small` writes N tiny .cu files (a few CUDA calls each) into 100 folders, runs
`musify migrate TREE -o OUT`, then `musify migrate --in-place` on a copy (committed by a staged
swap) and on a copy holding a `.git` directory (committed file by file), and prints the three wall
clocks (start-up included, as a user sees them). `big` writes one file of about --mb megabytes
of CUDA-looking code and prints the peak RSS of `musify migrate FILE -o OUT`.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BODY = "#include <cuda_runtime.h>\nvoid f{i}() {{ void *p; cudaMalloc(&p, 4); cudaFree(p); }}\n"
BIG_LINE = ("__global__ void k{i}(float *x) {{ x[threadIdx.x] = 0; }} // cudaMalloc\n"
            "void h{i}() {{ float *p; cudaMalloc(&p, 4); k{i}<<<1, 32>>>(p); cudaFree(p); }}\n")


def _musify(*args: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "musify", "migrate", "-q", *args], check=False, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def small(files: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        for i in range(files):
            d = tree / f"d{i % 100}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"f{i}.cu").write_text(BODY.format(i=i))
        _musify(str(tree), "--no-rename", "-o", str(Path(tmp) / "warm"))  # the rules cache exists
        out = _musify(str(tree), "-o", str(Path(tmp) / "out"))
        copy, vcs = Path(tmp) / "copy", Path(tmp) / "vcs"
        shutil.copytree(tree, copy)
        shutil.copytree(tree, vcs)
        (vcs / ".git").mkdir()  # beside a .git the renames are committed file by file (MU0020)
        inplace = _musify("--in-place", str(copy))
        by_file = _musify("--in-place", str(vcs))
        print(f"{files} files: -o {out:.2f} s, --in-place {inplace:.2f} s ({inplace / out:.2f}x, staged swap), "
              f"--in-place beside .git {by_file:.2f} s ({by_file / out:.2f}x, file by file)")


def big(megabytes: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.cu"
        with open(path, "w") as fh:
            i = 0
            while fh.tell() < megabytes * 1e6:
                fh.write(BIG_LINE.format(i=i))
                i += 1
        seconds = _musify(str(path), "-o", str(Path(tmp) / "out"))
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"{path.stat().st_size / 1e6:.1f} MB file: {seconds:.1f} s, peak RSS {peak:.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("small", "big"))
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--mb", type=float, default=50)
    args = ap.parse_args()
    small(args.files) if args.what == "small" else big(args.mb)


if __name__ == "__main__":
    main()
