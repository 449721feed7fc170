"""Throughput and memory of the full migration pipeline (not a test: figures go to README.md).

Builds a corpus of at least --mb megabytes by replicating the bundled corpora with renamed
identifiers (each copy's kernels and snake_case names get a suffix, so no two files are equal),
then runs `musify migrate CORPUS -o OUT --json run.json` as a user would, with -j1 and -j2, and
prints MB/s (wall clock, start-up included) and the peak RSS of the process tree.

    python benchmarks/bench_migrate.py --mb 10
    python benchmarks/bench_migrate.py --tree /usr/local/cuda/include --jobs 1 2

Peak memory is shown three ways: the largest single process (ru_maxrss) and, sampled every 50 ms
from /proc, the whole process tree at once (the parent and its -j workers together), as summed
RSS (a page the forked workers share with the parent counts once per process) and as summed PSS
(each shared page split between the processes sharing it: the memory the run really needs).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE_EXTS = {".cu", ".cuh", ".cpp", ".h", ".hpp"}
_SNAKE = re.compile(r"\b([a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9])\b")
_KERNEL = re.compile(r"__global__\s+(?:void|[\w:<>]+)\s+(?:__launch_bounds__\([^)]*\)\s*)?([A-Za-z_]\w*)")



def with_bytecode(env: dict, folder: Path) -> dict:
    """`env` with compiled bytecode on, as an installed tool has it: with PYTHONDONTWRITEBYTECODE
    set (as in some CI and agent shells) every timed run compiled its 100-odd modules again,
    0.7-1.0 s of CPU. Written under `folder` (the bench's work folder), never into a checkout."""
    env = dict(env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    return env

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


def _tree_mem_kb(root: int) -> tuple[int, int]:
    """Resident memory of `root` and its descendants now, in KiB (Linux /proc): the sum of their
    RSS, and the sum of their PSS (proportional set size: a page shared by n processes counts
    1/n in each, so the sum is the memory the run really holds; forked -j workers share the
    parent's pages, which the RSS sum counts once per process)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    rss = pss = 0
    todo = [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, ()))
        try:
            with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue
    return rss, pss


def run(corpus: Path, out: Path, jobs: int) -> tuple[float, float, float, float]:
    """Wall seconds, peak RSS of the largest process, peak of the tree's summed RSS and of its
    summed PSS (MB)."""
    if out.exists():
        shutil.rmtree(out)
    cmd = [sys.executable, "-m", "musify", "migrate", str(corpus), "-o", str(out), "-j", str(jobs),
           "--json", str(out.with_suffix(".json")), "-q", "--no-cache"]  # throughput, not cache hits
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    peak_tree = [0, 0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            rss, pss = _tree_mem_kb(proc.pid)
            peak_tree[0] = max(peak_tree[0], rss)
            peak_tree[1] = max(peak_tree[1], pss)

    sampler = threading.Thread(target=sample, daemon=True)
    if os.path.isdir("/proc"):
        sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"migrate failed ({code})")
    return wall, usage.ru_maxrss / 1024, peak_tree[0] / 1024, peak_tree[1] / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=10.0, help="corpus size in MB (default 10)")
    ap.add_argument("--corpora", type=Path, default=REPO / "corpora")
    ap.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--tree", type=Path, help="migrate this tree as it is instead of building a corpus")
    args = ap.parse_args()
    args.work = args.work.resolve()  # the runs start in the repository root
    if args.tree:
        corpus = args.tree.resolve()
        size = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file() and not p.is_symlink())
    else:
        corpus = args.work / "corpus"
        size = build_corpus(args.corpora, corpus, args.mb)
    nfiles = sum(1 for p in corpus.rglob("*") if p.is_file())
    print(f"corpus: {size / 1e6:.1f} MB in {nfiles} files ({corpus}); load average {os.getloadavg()[0]:.1f}",
          flush=True)
    # one warm-up so the rules cache exists, as for any user after the first run
    run(corpus, args.work / "warmup", 1)
    shutil.rmtree(args.work / "warmup", ignore_errors=True)
    for jobs in args.jobs:
        wall, rss, tree_rss, tree_pss = run(corpus, args.work / f"out-j{jobs}", jobs)
        print(f"-j{jobs}: {wall:.2f} s wall, {size / 1e6 / wall:.1f} MB/s, "
              f"{size / 1e6 / wall / jobs:.1f} MB/s per core, peak RSS {rss:.0f} MB (largest process), "
              f"{tree_rss:.0f} MB (RSS summed over processes), {tree_pss:.0f} MB (PSS summed: the run's total)",
              flush=True)
        shutil.rmtree(args.work / f"out-j{jobs}", ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
