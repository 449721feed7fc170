"""cuComplex -> muComplex: the names `cuComplex.h` declares, by the general CUDA pattern.

musify's table spells the header (`cuComplex.h` -> `muComplex.h`) and the names
(`cuFloatComplex` -> `muFloatComplex`, `cuCaddf` -> `muCaddf`), so these are not inferred.
"""

from __future__ import annotations

from pathlib import Path

from tools.gen_rules.headers import scan_files
from tools.gen_rules.libraries_b import Emitter, Record, renamed, version_macros
from tools.gen_rules.naming import musa_header, musa_name


def build(root: Path) -> list[Record]:
    decls = scan_files(root, ["cuComplex.h"])
    records = [renamed(d.name, musa_name(d.name), d.kind) for d in decls]
    records.append(Record("cuComplex.h", "header", musa=musa_header("cuComplex.h")))
    return records


EMITTERS = [Emitter("cucomplex", "cucomplex", "cuComplex.h", "nvidia_cuda_runtime", build,
                    lambda root: version_macros(root, "cuda.h", "CUDA_VERSION"))]
