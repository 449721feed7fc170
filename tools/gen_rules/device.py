"""Device-side rules: built-in variables, qualifiers, intrinsics, atomics, vector types, math.

MUSA keeps CUDA's kernel language (MUSA_FACTS section 1, "Unchanged on MUSA"): `threadIdx`,
`__global__`, `__syncthreads`, `__shfl_xor_sync`, `atomicAdd`, `__ldg`, `float4`, `make_float4`
and the math functions keep their names.  They are recorded as `unchanged` so the engine knows
them (counted as converted, never reported as unrecognised).  Names with a vendor word in these
headers (`__cudaGet_threadIdx`, `_CUDA_AWBARRIER_*`, `CUDART_PI_F`, `__nv_*_impl`) follow the
naming pattern; the `__nvvm_*` builtins the headers call become `__mtvm_*` (Moore Threads'
table).  Hopper/Blackwell-only intrinsics (`crt/sm_90_rt.h`, `crt/sm_100_rt.h`: clusters,
128-bit atomics) have no public MUSA counterpart (MUSA_FACTS section 2) and are `unsupported`;
so are the `__nv_fp128_*` quad-precision functions.
"""

from __future__ import annotations

import re
from pathlib import Path

from tools.gen_rules import Oracle, Record, claim, first_decls, header_record, pattern_record
from tools.gen_rules.headers import Decl, scan_files
from tools.gen_rules.naming import has_vendor_word, musa_name

DEVICE = "cuda-device"
MATH = "cuda-math"
DEVICE_HEADERS = [
    "device_launch_parameters.h", "vector_types.h", "vector_functions.h", "vector_functions.hpp",
    "device_functions.h", "crt/device_functions.h", "crt/device_functions.hpp",
    "device_atomic_functions.h", "device_atomic_functions.hpp", "sm_20_atomic_functions.h",
    "sm_20_atomic_functions.hpp", "sm_32_atomic_functions.h", "sm_32_atomic_functions.hpp",
    "sm_35_atomic_functions.h", "sm_60_atomic_functions.h", "sm_60_atomic_functions.hpp",
    "sm_20_intrinsics.h", "sm_20_intrinsics.hpp", "sm_30_intrinsics.h", "sm_30_intrinsics.hpp",
    "sm_32_intrinsics.h", "sm_32_intrinsics.hpp", "sm_35_intrinsics.h", "sm_61_intrinsics.h",
    "sm_61_intrinsics.hpp", "crt/sm_70_rt.h", "crt/sm_70_rt.hpp", "crt/sm_80_rt.h",
    "crt/sm_80_rt.hpp", "surface_indirect_functions.h", "texture_indirect_functions.h",
    "crt/mma.h", "crt/mma.hpp", "mma.h", "cuda_awbarrier.h", "cuda_awbarrier_helpers.h",
    "cuda_awbarrier_primitives.h", "cuda_pipeline.h", "cuda_pipeline_helpers.h",
    "cuda_pipeline_primitives.h",
]
UNSUPPORTED_DEVICE_HEADERS = ["crt/sm_90_rt.h", "crt/sm_90_rt.hpp", "crt/sm_100_rt.h", "crt/sm_100_rt.hpp"]
MATH_HEADERS = [
    "math_functions.h", "crt/math_functions.h", "crt/math_functions.hpp", "device_double_functions.h",
    "crt/device_double_functions.h", "crt/device_double_functions.hpp", "math_constants.h",
    "common_functions.h", "crt/common_functions.h",
]
UNSUPPORTED_MATH_HEADERS = ["crt/device_fp128_functions.h"]
# The qualifiers of the kernel language: compiler keywords or `crt/host_defines.h` macros.
QUALIFIERS = [
    "__global__", "__device__", "__host__", "__shared__", "__constant__", "__managed__",
    "__restrict__", "__launch_bounds__", "__forceinline__", "__noinline__",
]
_NVVM = re.compile(r"\b__nvvm_\w+")
_KEPT_KINDS = {"function", "type", "variable", "enum", "enumerator"}
# C runtime internals the math headers re-declare for MSVC/libc++ (`_FCosh`, `_alloca`, `__func__`)
_CRT_INTERNAL = re.compile(r"^_[A-Za-z]|^__libcpp_|^__func__$")
_NOTE_HOPPER = "Hopper/Blackwell-only intrinsic (clusters, 128-bit atomics, ...); no public MUSA counterpart"
_NOTE_FP128 = "quad-precision device math; no public MUSA source provides it"


def _keep(d: Decl) -> bool:
    """Declarations worth a record: vendor-word names, and real API names (no macros/namespaces)."""
    if has_vendor_word(d.name):
        return d.kind != "namespace"
    return d.kind in _KEPT_KINDS and len(d.name) > 2 and not _CRT_INTERNAL.match(d.name)


def _device_records(root: Path, headers: list[str], library: str, oracle: Oracle,
                    kinds: set[str] | None = None) -> list[Record]:
    recs = []
    for d in first_decls(scan_files(root, headers)).values():
        if not _keep(d) or (kinds and not has_vendor_word(d.name) and d.kind not in kinds):
            continue
        recs.append(pattern_record(d, oracle))
    return [_with_library(r, library) for r in recs]


def _unsupported(root: Path, headers: list[str], library: str, note: str) -> list[Record]:
    return [Record(d.name, d.kind, "unsupported", section=d.header, note=note, library=library)
            for d in first_decls(scan_files(root, headers)).values() if _keep(d)]


def _with_library(rec: Record, library: str) -> Record:
    return Record(rec.cuda, rec.kind, rec.status, rec.musa, rec.inferred, rec.section, rec.note, library)


def _nvvm_builtins(root: Path, headers: list[str], oracle: Oracle) -> list[Record]:
    """The `__nvvm_*` compiler builtins the headers call (they declare none of them)."""
    seen: dict[str, str] = {}
    for h in headers:
        path = root / h
        if path.is_file():
            for name in _NVVM.findall(path.read_text(encoding="utf-8", errors="replace")):
                seen.setdefault(name, h)
    return [Record(n, "function", "renamed", musa_name(n), not oracle.confirms(n, musa_name(n)),
                   section=h, library=DEVICE) for n, h in seen.items()]


def _qualifiers() -> list[Record]:
    return [Record(q, "keyword", "unchanged", section="kernel language", library=DEVICE)
            for q in QUALIFIERS]


def records(root: Path, oracle: Oracle, claimed: set[str]) -> tuple[list[str], list[Record]]:
    """Device and math records (one file each is written by the caller, split by library)."""
    device = [h for h in DEVICE_HEADERS + UNSUPPORTED_DEVICE_HEADERS if (root / h).is_file()]
    math = [h for h in MATH_HEADERS + UNSUPPORTED_MATH_HEADERS if (root / h).is_file()]
    recs = _qualifiers()
    recs += _device_records(root, DEVICE_HEADERS, DEVICE, oracle)
    recs += _nvvm_builtins(root, device + math, oracle)
    recs += _unsupported(root, UNSUPPORTED_DEVICE_HEADERS, DEVICE, _NOTE_HOPPER)
    recs += [header_record(h, oracle, DEVICE) for h in device]
    recs += _device_records(root, MATH_HEADERS, MATH, oracle, kinds={"function"})
    recs += _unsupported(root, UNSUPPORTED_MATH_HEADERS, MATH, _NOTE_FP128)
    recs += [header_record(h, oracle, MATH) for h in math]
    return device + math, claim(recs, claimed)
