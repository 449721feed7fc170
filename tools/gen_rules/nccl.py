"""NCCL -> MCCL: every name `nccl.h` declares, with the `nccl`/`NCCL` prefix swapped.

MUSA_FACTS section 1 gives the pattern (`nccl*` -> `mccl*`, `nccl.h` -> `mccl.h`). Only the
prefix changes: the rest of the name keeps its spelling (`ncclCommCuDevice` ->
`mcclCommCuDevice`, as torchada spells it), so the general CUDA pattern is not applied here.
The profiling entry points `pnccl*` become `pmccl*`.
"""

from __future__ import annotations

import re
from pathlib import Path

from tools.gen_rules.headers import scan_files
from tools.gen_rules.libraries_b import Emitter, Record, headers_under, renamed, version_macros

_PREFIX = re.compile(r"^(_*p?)(nccl|NCCL)")
HEADER_RENAMES = {"nccl.h": "mccl.h"}  # MUSA_FACTS section 1


def mccl_name(name: str) -> str:
    return _PREFIX.sub(lambda m: m.group(1) + ("mccl" if m.group(2) == "nccl" else "MCCL"), name)


def build(root: Path) -> list[Record]:
    headers = ["nccl.h", *(h for h in headers_under(root, ".", (".h",)) if h != "nccl.h")]
    headers = [h for h in headers if h.startswith(("nccl.h", "nccl_device"))
               and "/transport/" not in h and "/impl/" not in h]
    records = [renamed(d.name, mccl_name(d.name), d.kind) for d in scan_files(root, headers)
               if _PREFIX.match(d.name) and not d.scope]
    for header in ("nccl.h", "nccl_device.h"):  # the public headers; the rest are their parts
        if (root / header).is_file():
            attested = header in HEADER_RENAMES
            records.append(Record(header, "header", musa=HEADER_RENAMES.get(header, mccl_name(header)),
                                  inferred=None if attested else True,
                                  note="MUSA_FACTS section 1" if attested else None))
    return records


EMITTERS = [Emitter("nccl", "nccl", "nccl.h", "nvidia_nccl", build,
                    lambda root: version_macros(root, "nccl.h", "NCCL_MAJOR", "NCCL_MINOR",
                                                "NCCL_PATCH"))]
