"""The CUDA -> MUSA naming pattern (MUSA_FACTS section 1), as one function over an identifier.

Moore Threads name their API after CUDA's with the vendor words swapped: `cuda`/`CUDA` become
`musa`/`MUSA` wherever they occur, the driver and library prefix `cu`/`CU` becomes `mu`/`MU`
(`cuMemAlloc`, `CUdeviceptr`, `CU_CTX_MAP_HOST`, `cublasSgemm`, `CUBLAS_OP_N`), a `cubin` is a
`mubin`, and NVIDIA's own words become Moore Threads' (`__nv_` -> `__mt_`, `NVLINK` -> `MTLINK`,
`NvSci` -> `MtSci`, `nvvm` -> `mtvm`, `NVTX` -> `MTTX`, `npp` -> `mtpp`).  Moore Threads' own
table (torch_musa `mapping/general.json`) follows this pattern for all but a handful of names;
those irregular names are hand-written `overrides.yaml` records, never special cases here.

A word is only replaced at a word start (start of the identifier, after `_`, or at a camel-case
or digit boundary), and the `cu`/`CU` prefix only when what follows is a known CUDA word, so
`CUSTOM`, `CURRENT`, `Cubic` and `Accumulate` are never touched.

`musa_name` is meant for names that a CUDA header declares; `has_vendor_word` tells whether the
pattern changes a name at all (a name without one keeps its spelling on MUSA).
"""

from __future__ import annotations

import re

# Library words that may follow a `cu`/`CU` prefix inside a longer name (`DISABLE_CUSPARSE_...`).
LIBRARY_WORDS = ("blas", "rand", "fft", "sparse", "solver", "pti", "dnn")
# NVIDIA words that become Moore Threads words (`NVLINK` -> `MTLINK`).
NVIDIA_WORDS = ("link", "sci", "vm", "tx", "switch", "ptx", "std", "functional")
# Driver object words that keep the `cu`/`CU` prefix inside longer names (`..._CUDEVICE`, `NameCuContext`).
DRIVER_WORDS = ("context", "device", "stream", "event")

_START = r"(?:(?<![A-Za-z0-9])|(?<=_)|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9]))"
_LIB = "|".join(LIBRARY_WORDS)
_NV = "|".join(NVIDIA_WORDS)
_DRV = "|".join(DRIVER_WORDS)

_PATTERN = re.compile(
    "|".join([
        r"(?P<cuda>cuda|CUDA|Cuda)",
        rf"{_START}(?P<cubin>cubin|Cubin|CUBIN)",
        # `cu` + a capital (cuMemAlloc, PFN_cuInit) or a library word (cublasLt, cuuint32_t)
        rf"(?:^_*|(?<=_))(?P<cu>cu)(?=[A-Z0-9]|uint|{_LIB})",
        rf"{_START}(?P<cu_lib>cu|Cu|CU)(?=(?i:{_LIB}))",
        # `CU` + a lower-case letter or `_` at the start (CUdeviceptr, CU_CTX_MAP_HOST, CUGLmap)
        r"^_*(?P<CU>CU)(?=[a-z_]|GL|GPU|EGL|[A-Z][a-z])",
        rf"{_START}(?P<CU_word>CU|Cu)(?=(?i:{_DRV}))",
        rf"{_START}(?P<nv_word>nv|Nv|NV)(?=(?i:{_NV}))",
        r"^(?P<nv_prefix>_*(?:nv|NV))(?=_)",
        rf"{_START}(?P<npp>npp|NPP)",
    ])
)

_CASE = {"cuda": "musa", "CUDA": "MUSA", "Cuda": "Musa", "cu": "mu", "Cu": "Mu", "CU": "MU",
         "nv": "mt", "Nv": "Mt", "NV": "MT", "npp": "mtpp", "NPP": "MTPP"}


def _replace(m: re.Match[str]) -> str:
    text = m.group()
    core = text.lstrip("_")
    lead = text[: len(text) - len(core)]
    if m.lastgroup == "cubin":
        return lead + _CASE[core[:2]] + core[2:]
    return lead + _CASE[core]


def musa_name(cuda: str) -> str:
    """The MUSA spelling the naming pattern gives for a CUDA name (unchanged if no vendor word)."""
    return _PATTERN.sub(_replace, cuda)


def has_vendor_word(name: str) -> bool:
    """True when `name` contains a CUDA vendor word, i.e. the pattern would rename it."""
    return musa_name(name) != name


def musa_header(path: str) -> str:
    """The MUSA spelling of a CUDA header path (`cuda_runtime.h` -> `musa_runtime.h`)."""
    return "/".join(musa_name(part) for part in path.split("/"))
