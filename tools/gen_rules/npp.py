"""NPP rule table (`rules/npp/`): `npp.h` and the `nppi*`/`npps*`/`nppcore`/`nppdefs` headers.

`npp*` -> `mtpp*`, `NPP*` -> `MTPP*` (MUSA_FACTS section 1).  The data types (`Npp8u`,
`NppiSize`, `NppStatus`, `NppStreamContext`) carry no vendor word in the pattern's sense and keep
their spelling, as in Moore Threads' table.  NPP 13 dropped the functions without a stream
context (`nppiAdd_8u_C1RSfs`; only `..._Ctx` remain); pass the NPP 12 headers as a second
`--include` so that code written against them is still migrated.
Run: `python -m tools.gen_rules.npp --include NPP13_DIR --include NPP12_DIR`.
"""

from __future__ import annotations

import re

from tools.gen_rules.libraries_a import LibrarySpec, main

SPEC = LibrarySpec(
    module="npp",
    package="nvidia-npp",
    headers=("npp*.h",),
    owns=re.compile(r"(?i)(?:^|_)npp"),
    default_library="npp",
    keep=re.compile(r"Npp\w+"),
    version_macros=("NPP_VER_MAJOR", "NPP_VER_MINOR", "NPP_VER_PATCH"),
)

if __name__ == "__main__":
    raise SystemExit(main(SPEC))
