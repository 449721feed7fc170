"""`python -m tools.gen_rules [--cuda-include DIR] [--out rules] [--spelled-by TABLE.json ...]`.

Reads the CUDA headers, runs the per-domain emitters in a fixed order (driver, runtime, device
and math, reduced-precision floats; a name belongs to the first domain that emits it) and
writes one `generated*.yaml` per library.  `--spelled-by` names flat JSON tables of MUSA
spellings that a public source confirms (Moore Threads' `general.json` and `include.json`);
a pattern rename they do not confirm is marked `inferred: true`.  By default the tables are
read from `../shared/reference/musify/` beside the repository when it exists.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from tools.gen_rules import Oracle, Record, cudart, device, driver, fp, render_rule_file
from tools.gen_rules.traits import with_traits

REPO = Path(__file__).resolve().parents[2]
DEFAULT_TABLES = [REPO.parent / "shared" / "reference" / "musify" / n for n in ("general.json", "include.json")]
# file per library, and what the file holds (for its comment)
OUTPUTS = {
    "cuda-driver": ("driver/generated.yaml", "CUDA driver API names"),
    "cudart": ("runtime/generated.yaml", "CUDA runtime API names"),
    "cuda-device": ("device/generated.yaml", "device-side names (kernel language, intrinsics, vector types)"),
    "cuda-math": ("math/generated.yaml", "device math functions and constants"),
    "fp16": ("fp16/generated.yaml", "fp16 (half) names"),
    "bf16": ("bf16/generated.yaml", "bf16 names"),
    "fp8": ("fp8/generated.yaml", "fp8 names"),
    "fp6": ("fp8/generated_fp6.yaml", "fp6 names (no MUSA counterpart)"),
    "fp4": ("fp8/generated_fp4.yaml", "fp4 names (no MUSA counterpart)"),
}
EXTRA_SPELLED = {**fp.TORCHADA, "cuda_fp8.h": "musa_fp8.h"}  # MUSA_FACTS section 1 (torchada)


def cuda_version(include: Path) -> str:
    """`13.0` from cuda.h's `#define CUDA_VERSION 13000`."""
    m = re.search(r"^\s*#\s*define\s+CUDA_VERSION\s+(\d+)", (include / "cuda.h").read_text(), re.MULTILINE)
    if not m:
        raise SystemExit(f"{include / 'cuda.h'}: no CUDA_VERSION")
    value = int(m.group(1))
    return f"{value // 1000}.{value % 1000 // 10}"


def load_oracle(tables: list[Path]) -> Oracle:
    spelled: dict[str, str] = {}
    for path in tables:
        if path.is_file():
            spelled.update(json.loads(path.read_text(encoding="utf-8")))
    spelled.update(EXTRA_SPELLED)
    return Oracle(spelled)


def generate(include: Path, oracle: Oracle) -> dict[str, str]:
    """Rule file path (relative to the rules directory) -> file text."""
    version = cuda_version(include)
    claimed: set[str] = set()
    by_library: dict[str, list[Record]] = {lib: [] for lib in OUTPUTS}
    defaults = {cudart: "cudart", driver: "cuda-driver"}
    for emitter in (driver, cudart, device, fp):
        _, recs = emitter.records(include, oracle, claimed)
        for rec in recs:
            by_library[rec.library or defaults[emitter]].append(with_traits(rec))
    files = {}
    for library, (path, what) in OUTPUTS.items():
        recs = by_library[library]
        headers = sorted(r.cuda for r in recs if r.kind == "header")
        files[path] = render_rule_file(recs, library=library, cuda_version=version,
                                       headers=headers, what=what)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gen_rules", description=__doc__.split("\n")[0])
    parser.add_argument("--cuda-include", type=Path, default=Path("/usr/local/cuda/include"))
    parser.add_argument("--out", type=Path, default=REPO / "rules")
    parser.add_argument("--spelled-by", type=Path, action="append", default=None,
                        help="flat JSON table of confirmed MUSA spellings (repeatable)")
    args = parser.parse_args(argv)
    if not (args.cuda_include / "cuda.h").is_file():
        print(f"no cuda.h under {args.cuda_include}", file=sys.stderr)
        return 2
    oracle = load_oracle(args.spelled_by if args.spelled_by is not None else DEFAULT_TABLES)
    for rel, text in generate(args.cuda_include, oracle).items():
        path = args.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"{path}: {text.count(chr(10)) - 6} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
