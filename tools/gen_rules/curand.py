"""cuRAND rule table (`rules/curand/`): the host API `curand.h` and the device API
`curand_kernel.h` with the generator headers it includes (`curand_philox4x32_x.h`,
`curand_mtgp32*.h`, `curand_mrg32k3a.h`, ...).

`curand*` -> `murand*`, `CURAND*` -> `MURAND*` (MUSA_FACTS section 1).  The irregular names
(`curandStatePhilox4_32_10_t`, `curand_philox4x32_x.h`) are hand-written in
`rules/curand/overrides.yaml`.  MTGP32 parameter tables and the precalculated XORWOW and
MRG32k3a matrices carry no vendor word; user code names them (`mtgp32dc_params_fast_11213`),
so they are recorded as kept.  Run: `python -m tools.gen_rules.curand --include DIR`.
"""

from __future__ import annotations

import re

from tools.gen_rules.libraries_a import LibrarySpec, main

SPEC = LibrarySpec(
    module="curand",
    package="nvidia-curand",
    headers=("curand*.h",),
    owns=re.compile(r"(?i)(?:^|_)curand"),
    default_library="curand",
    keep=re.compile(r"mtgp32_\w+|mtgp32dc_params_fast_\d+|mtgpdc_params_\d+_num"
                    r"|precalc_xorwow_(?:offset_)?matrix(?:_host)?|mrg32k3aM[12]\w*"),
    version_macros=("CURAND_VER_MAJOR", "CURAND_VER_MINOR", "CURAND_VER_PATCH"),
)

if __name__ == "__main__":
    raise SystemExit(main(SPEC))
