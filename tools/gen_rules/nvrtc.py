"""NVRTC -> MTRTC: every name `nvrtc.h` declares, renamed by NVIDIA's `nv` -> Moore Threads' `mt`.

No public MUSA source spells the runtime-compilation API; the name follows the `nv*` -> `mt*`
rule MUSA_FACTS section 1 gives for NVIDIA's own words (`nvjpeg` -> `mtjpeg`, `NVTX` -> `MTTX`),
then the general CUDA pattern for the words inside (`nvrtcGetCUBIN` -> `mtrtcGetMUBIN`). Every
record is therefore `inferred`, and each use raises MU1004 so the user checks it.
"""

from __future__ import annotations

import re
from pathlib import Path

from tools.gen_rules.headers import scan_files
from tools.gen_rules.libraries_b import Emitter, Record, renamed
from tools.gen_rules.naming import musa_name

_PREFIX = re.compile(r"^(_*)(nvrtc|NVRTC)")
NOTE = "no public MUSA source spells NVRTC; nv -> mt as for nvjpeg/NVTX"


def mtrtc_name(name: str) -> str:
    swapped = _PREFIX.sub(lambda m: m.group(1) + ("mtrtc" if m.group(2) == "nvrtc" else "MTRTC"), name)
    return musa_name(swapped)


def build(root: Path) -> list[Record]:
    records = [renamed(d.name, mtrtc_name(d.name), d.kind, inferred=True)
               for d in scan_files(root, ["nvrtc.h"]) if _PREFIX.match(d.name)]
    records.append(Record("nvrtc.h", "header", musa="mtrtc.h", inferred=True, note=NOTE))
    return records


def _version(root: Path) -> str:
    m = re.search(r"CUDA Toolkit (\d+\.\d+)|NVRTC_VERSION\s+(\d+)", (root / "nvrtc.h").read_text(
        encoding="utf-8", errors="replace"))
    return f"nvrtc.h {m.group(1) or m.group(2)}" if m else "nvrtc.h"


EMITTERS = [Emitter("nvrtc", "nvrtc", "nvrtc.h", "nvidia_cuda_nvrtc", build, _version)]
