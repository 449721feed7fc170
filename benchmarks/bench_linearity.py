"""Is every scan linear in its input? Time one file's migration on hostile inputs at growing sizes.

Each generator below repeats one adversarial line (an opener that never closes, deep nesting,
a directive without its end, a lone quote...) until the file has the size asked for, and the
script times `migrate_text` (all passes of the file's kind) on it at each size. For a linear scan
the time grows like the size: the ratio column (time at 4x the size over time at the size) stays
near 4; a quadratic scan shows 16. Rows whose times stay under 0.1 s are not judged (noise). The last column names the pass that took the most time at
the largest size, so a regression points at its pass at once.

    python benchmarks/bench_linearity.py                 # 64 KB, 256 KB, 1 MB
    python benchmarks/bench_linearity.py --kb 128 512 2048 --only unclosed_paren

Exit status 1 when a ratio is above `--limit` (default 8: twice linear, room for noise).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import itertools

from musify import runner
from musify.options import Options
from musify.passes.languages import language_for
from musify.rules.reverse import load_for

HEAD = "#include <cuda_runtime.h>\n__global__ void k(float *x);\n"

# name -> (the line repeated, the kind of file)
INPUTS: dict[str, tuple[str, str]] = {
    "unclosed_launch": ("k<<<grid, block\n", "cu"),
    "unclosed_launch_args": ("k<<<g, b>>>(x, cudaMalloc(\n", "cu"),
    "unclosed_paren": ("cudaMemcpy(a, (b, (c\n", "cu"),
    "unclosed_brace": ("__global__ void f() { if (threadIdx.x < 32) {\n", "cu"),
    "unclosed_bracket": ("s[threadIdx.x + [warpSize\n", "cu"),
    "unclosed_template": ("template <typename T, int N = (32 <\n", "cu"),
    "unclosed_comment": ("/* cudaMalloc __shfl_sync(0xffffffff\n", "cu"),
    "unclosed_string": ('const char *s = "cudaMalloc\\\n', "cu"),
    "unclosed_raw_string": ('auto r = R"x(cudaFree )" \n', "cu"),
    "unclosed_if": ("#if __CUDA_ARCH__ >= 700\n", "cu"),
    "continued_macro": ("#define M(x) cudaMalloc(x) \\\n", "cu"),
    "shuffles_no_close": ("v += __shfl_down_sync(0xffffffff, v, 16\n", "cu"),
    "lane_arithmetic": ("int lane = threadIdx.x & 31; int w = threadIdx.x / 32;\n", "cu"),
    "nested_parens": ("((((((((((((((((((((\n", "cu"),
    "includes": ('#include "a.cuh"\n', "cu"),
    "python_unclosed": ("x = torch.cuda.device((\n", "py"),
    "python_string": ("s = '''torch.cuda\n", "py"),
    "cmake_unclosed": ("cuda_add_library(foo ${CUDA_\n", "cmake"),
}


def build(line: str, kb: int) -> str:
    body = line * max(1, (kb * 1024) // len(line))
    return (HEAD if line.isascii() else "") + body


def time_one(text: str, kind: str, ruleset, options) -> tuple[float, dict[str, float]]:
    """Whole migrate_text time, and each pass's share (the runner is handed a copy of the file
    kind's front end whose passes are timed)."""
    per_pass: dict[str, float] = defaultdict(float)

    def timed(name, run):
        def wrapper(ctx):
            t = time.perf_counter()
            try:
                return run(ctx)
            finally:
                per_pass[name] += time.perf_counter() - t
        return wrapper

    language = language_for(kind)
    copy = dataclasses.replace(language, passes=tuple((n, timed(n, r)) for n, r in language.passes))
    saved = runner.language_for
    runner.language_for = lambda _kind: copy
    try:
        t0 = time.perf_counter()
        runner.migrate_text(text, f"bench.{kind}", ruleset, options, kind=kind)
        return time.perf_counter() - t0, dict(per_pass)
    finally:
        runner.language_for = saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kb", type=int, nargs="+", default=[64, 256, 1024], help="file sizes in KB (each 4x the last)")
    ap.add_argument("--only", nargs="*", default=None, help="generator names to run")
    ap.add_argument("--repeat", type=int, default=1, help="best of N timings per size (steadier on a busy machine)")
    ap.add_argument("--limit", type=float, default=8.0, help="highest acceptable time ratio per 4x size")
    args = ap.parse_args(argv)
    options = Options()
    ruleset = load_for(options)
    names = args.only or list(INPUTS)
    worst = 0.0
    print(f"{'input':24} " + " ".join(f"{kb:>7} KB" for kb in args.kb) + "   ratio  slowest pass")
    for name in names:
        line, kind = INPUTS[name]
        times, passes = [], {}
        for kb in args.kb:
            text = build(line, kb)
            runs = [time_one(text, kind, ruleset, options) for _ in range(max(1, args.repeat))]
            seconds, passes = min(runs, key=lambda r: r[0])
            times.append(seconds)
        # below 0.1 s a timing is mostly the machine's noise: such a row is shown, not judged
        ratios = [b / a for a, b in itertools.pairwise(times) if a > 0 and b >= 0.1]
        ratio = max(ratios) if ratios else 0.0
        worst = max(worst, ratio)
        slow = max(passes.items(), key=lambda kv: kv[1])[0] if passes else "front end"
        mark = "  <-- superlinear" if ratio > args.limit else ""
        print(f"{name:24} " + " ".join(f"{t:9.3f}s" for t in times) + f"  {ratio:6.1f}  {slow}{mark}")
    print(f"worst ratio {worst:.1f} per {args.kb[1] // args.kb[0] if len(args.kb) > 1 else 1}x size (limit {args.limit})")
    return 1 if worst > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
