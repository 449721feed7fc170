"""Where the migration time goes: seconds per stage over a corpus, in one process.

    python benchmarks/profile_passes.py benchmarks/out/corpus

Complements bench_migrate.py (whole runs, wall clock) with a per-stage split: read and decode,
scan, each pass, merge and apply, statistics.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path

from musify.engine.edits import EditList, apply, merge
from musify.frontend.scanner import LineIndex, scan
from musify.options import Options
from musify.passes import PASSES, resolve
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.languages import scanner_prefixes
from musify.rules import load_ruleset


def main(root: str) -> None:
    rules = load_ruleset()
    passes = resolve(PASSES)
    prefixes = scanner_prefixes(rules)
    files = sorted(p for p in Path(root).rglob("*") if p.suffix in (".cu", ".cuh", ".cpp", ".h"))
    cost: dict[str, float] = defaultdict(float)
    total_bytes = 0
    t_all = time.perf_counter()
    for path in files:
        t = time.perf_counter()
        data = path.read_bytes()
        text = data.decode("utf-8", "surrogateescape")
        total_bytes += len(data)
        cost["read+decode"] += time.perf_counter() - t
        t = time.perf_counter()
        sc = scan(text, prefixes)
        lines = LineIndex(text)
        cost["scan"] += time.perf_counter() - t
        ctx = PassContext(path.name, text, sc, rules, Options(), ProjectInfo(), lines)
        edits = EditList()  # as the runner collects them
        for name, run in passes:
            t = time.perf_counter()
            edits.extend(run(ctx))
            cost[name] += time.perf_counter() - t
        t = time.perf_counter()
        apply(text, merge(edits)).encode("utf-8", "surrogateescape")
        cost["merge+apply"] += time.perf_counter() - t
    wall = time.perf_counter() - t_all
    print(f"{len(files)} files, {total_bytes / 1e6:.1f} MB, {wall:.2f} s, {total_bytes / 1e6 / wall:.1f} MB/s")
    for name, secs in sorted(cost.items(), key=lambda kv: -kv[1]):
        print(f"  {name:16s} {secs:6.2f} s  {100 * secs / wall:5.1f}%")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/out/corpus")
