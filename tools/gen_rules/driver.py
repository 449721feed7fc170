"""Driver API rules (`cuda.h` and its typedef/interop companions): `cu*` -> `mu*`, `CU*` -> `MU*`.

Every name with a vendor word that these headers declare is renamed by the naming pattern
(MUSA_FACTS section 1: `cuMemAlloc` -> `muMemAlloc`, `CUdeviceptr` -> `MUdeviceptr`,
`CUDA_SUCCESS` -> `MUSA_SUCCESS`, `PFN_cuInit` -> `PFN_muInit`).  Names without one (OpenCL
interop enums such as `cl_event_flags`, `NVCL_*`) are not vendor API that code calls, and are
left out.  The driver domain runs first, so opaque driver structs that the runtime headers also
mention (`CUstream_st`) are recorded here.
"""

from __future__ import annotations

from pathlib import Path

from tools.gen_rules import Oracle, Record, vendor_records

LIBRARY = "cuda-driver"
HEADERS = [
    "cuda.h", "cudaTypedefs.h", "cudaProfiler.h", "cudaProfilerTypedefs.h", "cudaGL.h",
    "cudaGLTypedefs.h", "cudaEGL.h", "cudaEGLTypedefs.h", "cudaVDPAU.h", "cudaVDPAUTypedefs.h",
]


def records(root: Path, oracle: Oracle, claimed: set[str]) -> tuple[list[str], list[Record]]:
    return vendor_records(root, HEADERS, oracle, claimed)
