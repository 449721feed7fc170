"""NVTX -> MTTX: the names the NVTX v3 headers (`nvtx3/`) declare, by the naming pattern.

MUSA_FACTS section 1: names with an embedded `NVTX` become `MTTX`; musify's table spells the
NVTX functions so inside CUPTI's callback ids (`CUPTI_CBID_NVTX_nvtxRangePushA` ->
`MUPTI_CBID_MTTX_mttxRangePushA`). No public source spells the MTTX headers themselves, so the
header records (`nvtx3/nvToolsExt.h` -> `mttx3/mtToolsExt.h`, NVIDIA's `nv` file prefix -> `mt`
as in `nvfunctional` -> `mtfunctional`) and every name here are inferred. The C++ wrapper's
classes live in namespace `nvtx3`, renamed as a whole.
"""

from __future__ import annotations

import re
from pathlib import Path

from tools.gen_rules.headers import scan_files
from tools.gen_rules.libraries_b import Emitter, Record, headers_under, renamed, version_macros
from tools.gen_rules.naming import musa_name

_NVTX = re.compile(r"nvtx|NVTX|Nvtx")


def mttx_header(path: str) -> str:
    """`nvtx3/nvToolsExt.h` -> `mttx3/mtToolsExt.h`: nvtx -> mttx, and a file's `nv` prefix -> `mt`."""
    parts = [re.sub(r"^nv(?=[A-Z])", "mt", musa_name(part)) for part in path.split("/")]
    return "/".join(parts)


def build(root: Path) -> list[Record]:
    headers = headers_under(root, "nvtx3", skip_detail=False)
    records = [renamed(d.name, musa_name(d.name), d.kind, inferred=True)
               for d in scan_files(root, headers) if _NVTX.search(d.name) and not d.scope]
    records.append(Record("nvtx3", "namespace", musa="mttx3", inferred=True))
    public = [h for h in headers if h.count("/") == 1]
    records += [Record(h, "header", musa=mttx_header(h), inferred=True) for h in public]
    # NVTX v2 shipped the same headers at the top of the CUDA include folder
    records += [Record(h.split("/", 1)[1], "header", musa=mttx_header(h.split("/", 1)[1]), inferred=True)
                for h in public if h.endswith(".h") and "/nvToolsExt" in h]
    return records


EMITTERS = [Emitter("nvtx", "nvtx", "nvtx3/nvToolsExt.h", "nvidia_nvtx", build,
                    lambda root: version_macros(root, "nvtx3/nvToolsExt.h", "NVTX_VERSION"))]
