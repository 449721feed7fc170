"""cuSOLVER rule table (`rules/cusolver/`): the dense (`cusolverDn.h`), sparse (`cusolverSp*.h`),
refactorisation (`cusolverRf.h`) and multi-GPU (`cusolverMg.h`) APIs and `cusolver_common.h`.

`cusolver*` -> `musolver*`, `CUSOLVER*` -> `MUSOLVER*` (MUSA_FACTS section 1).  The info types
without a vendor word (`gesvdjInfo_t`, `syevjInfo_t`, `csrqrInfo_t`) keep their spelling.  `cusolver_common.h` also declares the Householder enums
`cublasDirectMode_t`/`cublasStorevMode_t` (`CUBLAS_DIRECT_FORWARD`); they are cuSOLVER's.
Moore Threads' table spells the complex unitary routines `cusolverDnCun*` as `musolverDnMun*`;
those irregular names are in `rules/cusolver/overrides.yaml`.
Run: `python -m tools.gen_rules.cusolver --include DIR [--include OLDER_DIR]`.
"""

from __future__ import annotations

import re

from tools.gen_rules.libraries_a import LibrarySpec, main

SPEC = LibrarySpec(
    module="cusolver",
    package="nvidia-cusolver",
    headers=("cusolver*.h",),
    owns=re.compile(r"(?i)(?:^|_)cusolver|^CUBLAS_(?:DIRECT|STOREV)_|^cublas(?:Direct|Storev)Mode_t$"),
    default_library="cusolver",
    keep=re.compile(r"(?:csr\w*|gesvdj|syevj)Info(?:Host)?(?:_t)?"),
    version_macros=("CUSOLVER_VER_MAJOR", "CUSOLVER_VER_MINOR", "CUSOLVER_VER_PATCH"),
)

if __name__ == "__main__":
    raise SystemExit(main(SPEC))
