"""Incremental runs: first run, unchanged re-run, one-file-changed re-run (figures go to README.md).

Builds the replicated corpus of bench_migrate.py (--mb megabytes), then runs the whole CLI
`musify migrate CORPUS -o OUT --json OUT.json -q` three times, into the same output tree and
against one fresh cache root:
a first run (rules compiled or loaded, every file migrated), the same run again (every file a
cache hit), and a run after one file changed. It checks that the re-run wrote byte-identical
output and the same record (less the run's `started` and `seconds`), says whether the first run
left a whole-run memo (musify/memo.py) for the re-run to replay, and prints the speed-ups.

    python benchmarks/bench_incremental.py --mb 10 --warm-rules
    python benchmarks/bench_incremental.py --tree /usr/local/cuda/include/cccl --warm-rules   # real code
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_migrate import REPO, build_corpus, sources


def migrate(corpus: Path, out: Path, env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one whole CLI run."""
    cmd = [sys.executable, "-m", "musify", "migrate", str(corpus), "-o", str(out), "--json",
           str(out.with_suffix(".json")), "-q"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                          cwd=REPO, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        sys.exit(f"migrate failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def snapshot(out: Path) -> tuple[dict, dict]:
    record = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    for key in ("started", "seconds", "output"):
        record.pop(key, None)
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    return record, files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=10.0, help="corpus size in MB (default 10)")
    ap.add_argument("--corpora", type=Path, default=REPO / "corpora")
    ap.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out" / "incremental")
    ap.add_argument("--tree", type=Path, help="a real source tree to copy and use instead of the replicated corpus")
    ap.add_argument("--warm-rules", action="store_true",
                    help="compile the rules into the cache first, so the first run measures migration only")
    args = ap.parse_args()
    corpus = args.work / "corpus"
    if args.tree:
        shutil.rmtree(corpus, ignore_errors=True)
        shutil.copytree(args.tree, corpus, symlinks=True)
        size = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file())
    else:
        size = build_corpus(args.corpora, corpus, args.mb)
    files = sources(corpus)
    print(f"corpus: {size / 1e6:.1f} MB in {len(files)} files")
    cache = Path(tempfile.mkdtemp(prefix="musify-cache-"))
    env = dict(os.environ, MUSIFY_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    try:
        if args.warm_rules:
            probe = args.work / "probe.cu"
            probe.write_text("int x;\n")
            subprocess.run([sys.executable, "-m", "musify", "check", str(probe), "-q", "--no-cache"],
                           env=env, cwd=REPO, capture_output=True, check=False)
        out = args.work / "out"
        shutil.rmtree(out, ignore_errors=True)
        first = migrate(corpus, out, env)
        print(f"first run:         {first[0]:6.2f} s wall {first[1]:6.2f} s CPU ({size / 1e6 / first[0]:.1f} MB/s)")
        before = snapshot(out)
        again = migrate(corpus, out, env)  # into the same output tree, as a user re-runs
        same = snapshot(out) == before
        memo = "a run memo was kept" if any((cache / "runs").glob("run-*.pickle")) else "NO run memo"
        print(f"unchanged re-run:  {again[0]:6.2f} s wall {again[1]:6.2f} s CPU ({first[0] / again[0]:.1f}x faster wall, "
              f"{first[1] / again[1]:.1f}x CPU; output and record {'identical' if same else 'DIFFERENT'}; {memo})")
        victim = files[len(files) // 2]
        victim.write_text(victim.read_text(encoding="utf-8", errors="surrogateescape") + "\n// edited\n",
                          encoding="utf-8", errors="surrogateescape")
        one = migrate(corpus, out, env)
        print(f"one file changed:  {one[0]:6.2f} s wall {one[1]:6.2f} s CPU ({first[0] / one[0]:.1f}x faster wall, "
              f"{first[1] / one[1]:.1f}x CPU; {victim.relative_to(corpus)})")
        if not same:
            sys.exit(1)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
