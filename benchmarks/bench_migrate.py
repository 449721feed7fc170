"""Throughput and memory of the full migration pipeline (not a test: figures go to README.md).

Builds a corpus of at least --mb megabytes by replicating the bundled corpora with renamed
identifiers (each copy's kernels and snake_case names get a suffix, so no two files are equal),
then runs `musify migrate CORPUS -o OUT --json run.json` as a user would, with -j1 and -j2, and
prints MB/s (wall clock, start-up included) and the peak RSS of the process tree.

    python benchmarks/bench_migrate.py --mb 10
"""

from __future__ import annotations

import argparse
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE_EXTS = {".cu", ".cuh", ".cpp", ".h", ".hpp"}
_SNAKE = re.compile(r"\b([a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9])\b")
_KERNEL = re.compile(r"__global__\s+(?:void|[\w:<>]+)\s+(?:__launch_bounds__\([^)]*\)\s*)?([A-Za-z_]\w*)")


def sources(corpora: Path) -> list[Path]:
    return sorted(p for p in corpora.rglob("*") if p.suffix in SOURCE_EXTS and "expected" not in p.parts)


def build_corpus(corpora: Path, dest: Path, megabytes: float) -> int:
    files = sources(corpora)
    if not files:
        sys.exit(f"no sources under {corpora}")
    texts = [(p.relative_to(corpora), p.read_text(encoding="utf-8", errors="surrogateescape")) for p in files]
    if dest.exists():
        shutil.rmtree(dest)
    total = 0
    copy = 0
    while total < megabytes * 1e6:
        for rel, text in texts:
            kernels = set(_KERNEL.findall(text))
            suffix = f"_c{copy}"
            renamed = _SNAKE.sub(lambda m, suffix=suffix: m.group(1) + suffix, text)
            for k in kernels:
                renamed = re.sub(rf"\b{re.escape(k)}\b", f"{k}_c{copy}", renamed)
            out = dest / f"copy{copy:04d}" / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(renamed, encoding="utf-8", errors="surrogateescape")
            total += len(renamed.encode("utf-8", "surrogateescape"))
        copy += 1
    return total


def run(corpus: Path, out: Path, jobs: int) -> tuple[float, float]:
    if out.exists():
        shutil.rmtree(out)
    cmd = [sys.executable, "-m", "musify", "migrate", str(corpus), "-o", str(out), "-j", str(jobs),
           "--json", str(out.with_suffix(".json")), "-q", "--no-cache"]  # throughput, not cache hits
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"migrate failed ({proc.returncode}): {proc.stderr[-2000:]}")
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak_kb, before) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=10.0, help="corpus size in MB (default 10)")
    ap.add_argument("--corpora", type=Path, default=REPO / "corpora")
    ap.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    corpus = args.work / "corpus"
    size = build_corpus(args.corpora, corpus, args.mb)
    nfiles = sum(1 for p in corpus.rglob("*") if p.is_file())
    print(f"corpus: {size / 1e6:.1f} MB in {nfiles} files (from {args.corpora})")
    # one warm-up so the rules cache exists, as for any user after the first run
    run(corpus, args.work / "warmup", 1)
    for jobs in args.jobs:
        wall, rss = run(corpus, args.work / f"out-j{jobs}", jobs)
        print(f"-j{jobs}: {wall:.2f} s wall, {size / 1e6 / wall:.1f} MB/s, "
              f"{size / 1e6 / wall / jobs:.1f} MB/s per core, peak RSS {rss:.0f} MB (largest process)")


if __name__ == "__main__":
    main()
