"""-j scaling of whole CLI runs, side by side (not a test: figures go to README.md).

Runs `musify migrate CORPUS -o OUT -j N --json run.json -q --no-cache` for each N, alternating
(-j1, -j2, -j1, -j2, ...) so that both see the same machine, and prints for each run the wall
time, the CPU time of the parent process and of its workers, and the load average. On a shared
machine the wall ratio says little on its own; the CPU split says what the critical path is:
a -j2 run cannot take less than the parent's serial work plus half of the workers' CPU, and the
script prints the speed-up that gives on idle cores (counting all of the parent's CPU as serial).

It also measures what the machine itself allows (`--ceiling`): the same pure-Python loop run
once alone and as two processes at once. On two idle cores two copies take as long as one (a
ceiling of 2.0); on a loaded or oversubscribed machine less, and no -j2 can beat that.

It checks that every -j gives a byte-identical output tree and the same record (less times,
the command line and the `jobs` option).

    python benchmarks/bench_jobs.py --mb 10 --repeat 3
    python benchmarks/bench_jobs.py --tree /usr/local/cuda/include --jobs 1 2 --repeat 2
    python benchmarks/bench_jobs.py --tree /tmp/bvp/replicated --repeat 3 --baseline /work/main
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_migrate import REPO, build_corpus, with_bytecode

# the CLI, with its own and its children's CPU time written at exit (the workers are reaped by then)
WRAPPER = """
import atexit, os, resource, sys
def _cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.environ["BENCH_CPU"], "w") as fh:
        fh.write(f"{s.ru_utime + s.ru_stime} {c.ru_utime + c.ru_stime}")
atexit.register(_cpu)
sys.argv = ["musify"] + sys.argv[1:]
from musify.cli import main
main()
"""
LOOP = "x = 0\nfor i in range(12_000_000):\n    x += i * i % 7\n"


def run(corpus: Path, out: Path, jobs: int, repo: Path = REPO) -> tuple[float, float, float]:
    """Wall seconds, parent CPU seconds, workers' CPU seconds (musify from `repo`)."""
    shutil.rmtree(out, ignore_errors=True)
    cpu_file = out.with_suffix(".cpu")
    env = with_bytecode(dict(os.environ, BENCH_CPU=str(cpu_file), PYTHONPATH=str(repo)), out.parent)
    cmd = [sys.executable, "-c", WRAPPER, "migrate", str(corpus), "-o", str(out), "-j", str(jobs),
           "--json", str(out.with_suffix(".json")), "-q", "--no-cache"]
    t0 = time.perf_counter()
    code = subprocess.run(cmd, env=env, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          check=False).returncode
    wall = time.perf_counter() - t0
    if code not in (0, 1):
        sys.exit(f"migrate -j{jobs} failed ({code})")
    parent, children = (float(x) for x in cpu_file.read_text().split())
    return wall, parent, children


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def record_of(out: Path) -> dict:
    from musify.records import RunRecord

    d = RunRecord.from_json(json.loads(out.with_suffix(".json").read_text())).to_json(deterministic=True)
    for key in ("command", "output"):
        d.pop(key)
    return d


def ceiling() -> float:
    """Two copies of a CPU-bound loop at once against one alone: 2.0 on two idle cores."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", LOOP], check=True)
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", LOOP]) for _ in range(2)]
    for p in procs:
        p.wait()
    two = time.perf_counter() - t0
    return 2 * one / two


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=10.0, help="corpus size in MB (default 10)")
    ap.add_argument("--tree", type=Path, help="migrate this tree as it is instead of building a corpus")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-ceiling", action="store_true", help="skip the machine's own two-process ceiling")
    ap.add_argument("--baseline", type=Path, help="another checkout (with its extensions built) run the same "
                    "way, alternated with this one: its parent's and workers' CPU beside this one's")
    args = ap.parse_args()
    if args.baseline:
        return compare(args)
    work = Path(tempfile.mkdtemp(prefix="musify-jobs-"))
    if args.tree:
        corpus = args.tree.resolve()
    else:
        corpus = work / "corpus"
        size = build_corpus(REPO / "corpora", corpus, args.mb)
        print(f"corpus: {size / 1e6:.1f} MB", flush=True)
    run(corpus, work / "warmup", 1)  # the rules compiled and the page cache warm, as after a first run
    walls: dict[int, list[float]] = {j: [] for j in args.jobs}
    cpus: dict[int, list[tuple[float, float]]] = {j: [] for j in args.jobs}
    digests: dict[int, tuple[str, dict]] = {}
    for r in range(args.repeat):
        if not args.no_ceiling:
            print(f"round {r + 1}: machine ceiling for two processes {ceiling():.2f}x "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
        for jobs in args.jobs:
            out = work / f"out-j{jobs}"
            wall, parent, children = run(corpus, out, jobs)
            walls[jobs].append(wall)
            cpus[jobs].append((parent, children))
            print(f"round {r + 1}: -j{jobs} {wall:6.2f} s wall, parent {parent:5.2f} s CPU, workers "
                  f"{children:5.2f} s CPU, load {os.getloadavg()[0]:.1f}", flush=True)
            if r == 0:
                digests[jobs] = (tree_digest(out), record_of(out))
    base = args.jobs[0]
    for jobs in args.jobs[1:]:
        ratios = sorted(a / b for a, b in zip(walls[base], walls[jobs]))
        print(f"-j{jobs} vs -j{base}: speed-up {ratios[len(ratios) // 2]:.2f}x median "
              f"({ratios[0]:.2f}-{ratios[-1]:.2f}) over {len(ratios)} alternated pairs")
        # on idle cores a -jN run takes about its parent's CPU (all of it counted as serial: a
        # little pessimistic, the parent takes results in while the workers run) plus its
        # workers' CPU shared between N cores; -j1 takes its CPU
        one = min(p + c for p, c in cpus[base])
        estimate = max(one / (p + c / jobs) for p, c in cpus[jobs])
        print(f"-j{jobs} vs -j{base} from CPU times: about {estimate:.2f}x on {jobs} idle cores "
              f"(best -j{base} CPU {one:.2f} s over the parent's CPU plus the workers' / {jobs})")
        same = digests[jobs] == digests[base]
        print(f"-j{jobs} output tree and record identical to -j{base}: {same}")
    shutil.rmtree(work, ignore_errors=True)


def compare(args) -> None:
    """This checkout against `--baseline`, alternated run by run, for each -j: the CPU split is
    what says whether the parent's serial work shrank (wall times swing with the machine's load)."""
    work = Path(tempfile.mkdtemp(prefix="musify-jobs-"))
    if args.tree:
        corpus = args.tree.resolve()
    else:
        corpus = work / "corpus"
        print(f"corpus: {build_corpus(REPO / 'corpora', corpus, args.mb) / 1e6:.1f} MB", flush=True)
    checkouts = {"baseline": args.baseline.resolve(), "this": REPO}
    for name, repo in checkouts.items():
        run(corpus, work / f"warmup-{name}", 1, repo)  # rules compiled, bytecode written, page cache warm
    seen: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    for r in range(args.repeat):
        for jobs in args.jobs:
            for name in (("baseline", "this") if r % 2 == 0 else ("this", "baseline")):
                wall, parent, children = run(corpus, work / f"out-{name}-j{jobs}", jobs, checkouts[name])
                seen.setdefault((name, jobs), []).append((wall, parent, children))
                print(f"round {r + 1}: {name:8s} -j{jobs} {wall:6.2f} s wall, parent {parent:5.2f} s CPU, "
                      f"workers {children:5.2f} s CPU, load {os.getloadavg()[0]:.1f}", flush=True)
    for name in checkouts:
        one = min(p + c for _, p, c in seen[(name, args.jobs[0])])
        for jobs in args.jobs[1:]:
            runs = seen[(name, jobs)]
            parents = sorted(p for _, p, _ in runs)
            estimate = max(one / (p + c / jobs) for _, p, c in runs)
            print(f"{name}: -j{jobs} parent CPU {parents[len(parents) // 2]:.2f} s median "
                  f"({parents[0]:.2f}-{parents[-1]:.2f}); -j{jobs} vs -j{args.jobs[0]} from CPU times about "
                  f"{estimate:.2f}x on {jobs} idle cores (best -j{args.jobs[0]} CPU {one:.2f} s)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
