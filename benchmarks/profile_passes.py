"""Where the migration time goes: seconds per stage over a corpus, in one process.

    python benchmarks/profile_passes.py benchmarks/out/corpus

Complements bench_migrate.py (whole runs, wall clock) with a per-stage split: read and decode,
scan, each pass, merge and apply. It runs what `runner.edit_text` runs: every file discovery
gives a migrated kind (`.hpp`, `.inl` and the rest, not only `.cu`/`.cuh`/`.cpp`/`.h`), its
language's front end and the run's plan of passes (a pass left out or skipped on a file is not
counted, as the runner does not call it). Times are CPU seconds of this thread
(`time.thread_time`), which other processes on the machine disturb less than wall time.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path

from musify.discover import discover
from musify.engine.edits import EditList, apply, merge
from musify.frontend.scanner import LineIndex
from musify.options import Options
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.languages import language_for, plan
from musify.passes.literals import file_bits
from musify.rules import load_ruleset
from musify.rules.reverse import file_direction


def main(root: str) -> None:
    rules = load_ruleset()
    options = Options()
    kinds = file_direction(options.reverse)[2]
    files = [(Path(f.abspath), f.kind) for f in discover([root]).files if f.kind in kinds and f.symlink is None]
    cost: dict[str, float] = defaultdict(float)
    total_bytes = 0
    clock = time.thread_time
    t_all = clock()
    for path, kind in files:
        t = clock()
        data = path.read_bytes()
        text = data.decode("utf-8", "surrogateescape")
        total_bytes += len(data)
        cost["read+decode"] += clock() - t
        t = clock()
        language = language_for(kind)
        sc = language.front_end(text, rules)
        lines = LineIndex(text)
        cost["scan"] += clock() - t
        ctx = PassContext(path.name, text, sc, rules, options, ProjectInfo(), lines)
        passes, prefixes = plan(language, rules, options)
        present = sc.idents.names if prefixes and sc.prefixes is prefixes else None
        edits = EditList()  # as the runner collects them
        bits = None
        for name, run, needs, triggers, _ in passes:  # skipped as the runner skips them (facts unread)
            if needs is not None and present is not None and needs.isdisjoint(present):
                continue
            if triggers:
                if bits is None:
                    bits = file_bits(ctx)
                if not bits & triggers:
                    continue
            ctx.found.current_pass = name
            t = clock()
            edits.extend(run(ctx))
            cost[name] += clock() - t
        t = clock()
        apply(text, merge(edits)).encode("utf-8", "surrogateescape")
        cost["merge+apply"] += clock() - t
    spent = clock() - t_all
    print(f"{len(files)} files, {total_bytes / 1e6:.1f} MB, {spent:.2f} s CPU, {total_bytes / 1e6 / spent:.1f} MB/s")
    for name, secs in sorted(cost.items(), key=lambda kv: -kv[1]):
        print(f"  {name:16s} {secs:6.2f} s  {100 * secs / spent:5.1f}%")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/out/corpus")
