"""Runtime API rules (`cuda_runtime_api.h` and the headers it pulls in): `cuda*` -> `musa*`.

Every name with a vendor word is renamed by the naming pattern (`cudaMalloc` -> `musaMalloc`,
`cudaError_t` -> `musaError_t`, `CUDART_CB` -> `MUSART_CB`).  Names without one are either
compiler qualifiers (recorded by the device domain), standard names re-declared for nvcc
(`cuda_stdint.h`'s `uint32_t`), or implementation details of nvcc's generated code
(`crt/host_runtime.h`), and are left out.  Attribute macros such as `CUDARTAPI` and
`__cudart_builtin__` carry a vendor word and are recorded like any other macro (Moore Threads'
table renames them too); include guards are skipped by the scanner.
"""

from __future__ import annotations

from pathlib import Path

from tools.gen_rules import Oracle, Record, vendor_records

LIBRARY = "cudart"
HEADERS = [
    "cuda_runtime_api.h", "cuda_runtime.h", "driver_types.h", "driver_functions.h",
    "surface_types.h", "texture_types.h", "library_types.h", "cuda_device_runtime_api.h",
    "cuda_profiler_api.h", "cuda_gl_interop.h", "cuda_egl_interop.h", "cuda_vdpau_interop.h",
    "cuda_occupancy.h", "channel_descriptor.h", "builtin_types.h", "device_types.h",
    "cudart_platform.h", "cuda_stdint.h", "host_config.h", "host_defines.h", "crt/host_config.h",
    "crt/host_defines.h", "cuda_surface_types.h", "cuda_texture_types.h",
]


def records(root: Path, oracle: Oracle, claimed: set[str]) -> tuple[list[str], list[Record]]:
    return vendor_records(root, HEADERS, oracle, claimed)
