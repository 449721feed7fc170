"""CUTLASS/CuTe -> MUTLASS/MuTe: namespaces, headers and macros.

MUSA_FACTS section 1: `cutlass` -> `mutlass`, `cute/` -> `mute/`. torchada's mapping spells the
namespace (`cutlass::` -> `mutlass::`), the macro prefix (`CUTLASS` -> `MUTLASS`) and headers,
including the renamed file `cutlass/cutlass.h` -> `mutlass/mutlass.h`: every path component
`cutlass` becomes `mutlass`. Names inside the namespaces keep their spelling, so the namespace
records are enough for code; macros and header paths are listed one by one.
"""

from __future__ import annotations

import re
from pathlib import Path

from tools.gen_rules.headers import scan_files
from tools.gen_rules.libraries_b import Emitter, Record, headers_under, renamed
from tools.gen_rules.naming import musa_name

TORCHADA = "torchada's cutlass mapping"
_SUFFIXES = (".h", ".hpp", ".inl", ".cuh")


def mutlass_name(name: str) -> str:
    """`CUTLASS_HOST_DEVICE` -> `MUTLASS_HOST_DEVICE`, `CUTE_HOST_DEVICE` -> `MUTE_HOST_DEVICE`."""
    swapped = re.sub(r"(?<![A-Za-z])(CUTLASS|CUTE)(?![a-z])",
                     lambda m: "MUTLASS" if m.group(1) == "CUTLASS" else "MUTE", name)
    return musa_name(re.sub(r"cutlass", "mutlass", swapped))


def mutlass_header(path: str) -> str:
    parts = path.split("/")
    parts[0] = {"cutlass": "mutlass", "cute": "mute"}[parts[0]]
    return "/".join(p.replace("cutlass", "mutlass") for p in parts)


def build(root: Path) -> list[Record]:
    records = [Record("cutlass", "namespace", musa="mutlass", inferred=False, note=TORCHADA),
               Record("cute", "namespace", musa="mute", inferred=False, note="MUSA_FACTS section 1")]
    headers = headers_under(root, "cutlass", _SUFFIXES, skip_detail=False) + \
        headers_under(root, "cute", _SUFFIXES, skip_detail=False)
    for h in headers:
        seen = h in ("cutlass/cutlass.h", "cutlass/array.h", "cutlass/numeric_types.h")
        records.append(Record(h, "header", musa=mutlass_header(h), inferred=not seen,
                              note=TORCHADA if seen else None))
    records += [renamed(d.name, mutlass_name(d.name), "macro", inferred=True)
                for d in scan_files(root, headers)
                if d.kind == "macro" and re.match(r"_*(CUTLASS|CUTE)(?![a-z])", d.name)]
    return records


def _version(root: Path) -> str:
    text = (root / "cutlass/version.h").read_text(encoding="utf-8", errors="replace")
    parts = [re.search(rf"#define CUTLASS_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
    return "CUTLASS " + ".".join(m.group(1) if m else "?" for m in parts)


EMITTERS = [Emitter("cutlass", "cutlass", "cutlass/cutlass.h", "nvidia_cutlass", build, _version)]
