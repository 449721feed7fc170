"""cuBLAS, cuBLASXt and cuBLASLt rule tables (`rules/cublas/`, `rules/cublaslt/`).

MUSA ships muBLAS and, from SDK 4.3, muBLASLt (MUSA_FACTS sections 1 and 2): `cublas*` ->
`mublas*`, `CUBLAS*` -> `MUBLAS*`, `cublasLt*` -> `mublasLt*`.  The Fortran-style BLAS symbols
that `nvblas.h` declares (`sgemm_`) are the host BLAS interface and are left alone.
Run: `python -m tools.gen_rules.cublas --include DIR [--include OLDER_DIR]` (see libraries_a).
"""

from __future__ import annotations

import re

from tools.gen_rules.libraries_a import LibrarySpec, main

SPEC = LibrarySpec(
    module="cublas",
    package="nvidia-cublas",
    headers=("cublas*.h", "nvblas.h"),
    owns=re.compile(r"(?i)(?:^|_)cublas"),
    libraries=((re.compile(r"(?i)(?:^|_)cublasLt|^cublasLt\.h$"), "cublaslt"),),
    default_library="cublas",
    version_macros=("CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH"),
)

if __name__ == "__main__":
    raise SystemExit(main(SPEC))
