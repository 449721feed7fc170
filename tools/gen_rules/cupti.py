"""CUPTI -> MUPTI: every name the CUPTI headers declare, by the general CUDA naming pattern.

The pattern covers the embedded API names too: a callback id such as
`CUPTI_DRIVER_TRACE_CBID_cuMemAlloc` becomes `MUPTI_DRIVER_TRACE_CBID_muMemAlloc`, and
`CUPTI_CBID_NVTX_nvtxNameCuDeviceA` becomes `MUPTI_CBID_MTTX_mttxNameMuDeviceA`, as musify's
own table spells them. The `generated_*_meta.h` headers that CUPTI ships (the parameter structs
of every traced call, `cuMemAlloc_params`) are part of the callback API and come along.
The few names musify spells irregularly are hand-written in `rules/cupti/overrides.yaml`.
"""

from __future__ import annotations

from pathlib import Path

from tools.gen_rules.headers import scan_files
from tools.gen_rules.libraries_b import Emitter, Record, renamed, version_macros
from tools.gen_rules.naming import has_vendor_word, musa_header, musa_name


def cupti_headers(root: Path) -> list[str]:
    return sorted(p.name for p in root.glob("*.h")
                  if p.name.startswith(("cupti", "generated_cuda", "generated_nvtx")))


def build(root: Path) -> list[Record]:
    headers = cupti_headers(root)
    records = []
    for decl in scan_files(root, headers):
        if has_vendor_word(decl.name) and not decl.scope:
            section = "callback parameters" if decl.header.startswith("generated_") else None
            records.append(renamed(decl.name, musa_name(decl.name), decl.kind, section=section))
    records += [Record(h, "header", musa=musa_header(h)) for h in headers if h.startswith("cupti")]
    return records


EMITTERS = [Emitter("cupti", "cupti", "cupti.h", "nvidia_cuda_cupti", build,
                    lambda root: version_macros(root, "cupti_version.h", "CUPTI_API_VERSION"))]
