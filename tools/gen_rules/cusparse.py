"""cuSPARSE rule table (`rules/cusparse/`): `cusparse.h` (and `cusparse_v2.h`, which only
includes it).

`cusparse*` -> `musparse*`, `CUSPARSE*` -> `MUSPARSE*` (MUSA_FACTS section 1).  The opaque
info types of the legacy API (`csrsv2Info_t`, `bsric02Info_t`, `pruneInfo_t`) carry no vendor
word and keep their spelling.  Names removed before CUDA 12 (`cusparseScsrmv`, the HYB format)
are hand-written in `rules/cusparse/curated.yaml`.
Run: `python -m tools.gen_rules.cusparse --include DIR [--include OLDER_DIR]`.
"""

from __future__ import annotations

import re

from tools.gen_rules.libraries_a import LibrarySpec, main

SPEC = LibrarySpec(
    module="cusparse",
    package="nvidia-cusparse",
    headers=("cusparse*.h",),
    owns=re.compile(r"(?i)(?:^|_)cusparse"),
    default_library="cusparse",
    keep=re.compile(r"(?:bsr|csr|csc|csru2csr|prune)\w*Info(?:_t)?"),
    version_macros=("CUSPARSE_VER_MAJOR", "CUSPARSE_VER_MINOR", "CUSPARSE_VER_PATCH"),
)

if __name__ == "__main__":
    raise SystemExit(main(SPEC))
