"""CUB and Thrust (CCCL): kept on MUSA, except Thrust's CUDA backend.

MUSA ships CUB as muAlg and Thrust as muThrust under the same names: namespaces `cub::` and
`thrust::`, headers `<cub/...>` and `<thrust/...>` (MUSA_FACTS section 1). What changes is
Thrust's CUDA system: `thrust::cuda` -> `thrust::musa` (torchada), `thrust::system::cuda` and
the headers under `thrust/system/cuda/` -> `.../musa/`, and `thrust::cuda_cub` ->
`thrust::musa_cub` (muThrust's own sources use both). Macros keep their names unless they
hold a CUDA word (`THRUST_DEVICE_SYSTEM_CUDA` -> `THRUST_DEVICE_SYSTEM_MUSA`, seen in muThrust's
tests).
"""

from __future__ import annotations

import re
from pathlib import Path

from tools.gen_rules.headers import scan_files
from tools.gen_rules.libraries_b import Emitter, Record, headers_under, renamed, version_macros
from tools.gen_rules.naming import musa_name

MUTHRUST = "muThrust's sources spell it"


def macros(root: Path, sub: str, prefix: re.Pattern[str]) -> list[Record]:
    headers = headers_under(root, sub, (".h", ".cuh", ".hpp", ".inl"), skip_detail=False)
    return [renamed(d.name, musa_name(d.name), "macro") for d in scan_files(root, headers)
            if d.kind == "macro" and prefix.match(d.name)]


def build_cub(root: Path) -> list[Record]:
    records = [Record("cub", "namespace", status="unchanged", note="MUSA_FACTS section 1 (muAlg)")]
    records += [Record(h, "header", status="unchanged") for h in headers_under(root, "cub", (".cuh",))]
    return records + macros(root, "cub", re.compile(r"^_*(CUB|Cub)"))


def thrust_header(path: str) -> str:
    return path.replace("thrust/system/cuda/", "thrust/system/musa/")


def build_thrust(root: Path) -> list[Record]:
    records = [
        Record("thrust", "namespace", status="unchanged", note="MUSA_FACTS section 1 (muThrust)"),
        Record("thrust::cuda", "namespace", musa="thrust::musa", inferred=False,
               note="MUSA_FACTS section 1; torchada"),
        Record("thrust::system::cuda", "namespace", musa="thrust::system::musa", inferred=False,
               note=MUTHRUST),
        Record("thrust::cuda_cub", "namespace", musa="thrust::musa_cub", inferred=False, note=MUTHRUST),
    ]
    for h in headers_under(root, "thrust", (".h",)):
        records.append(renamed(h, thrust_header(h), "header"))
    records += macros(root, "thrust", re.compile(r"^_*THRUST"))
    return [r if r.cuda != "THRUST_DEVICE_SYSTEM_CUDA" else Record(
        r.cuda, r.kind, musa=r.musa, inferred=False, note=MUTHRUST) for r in records]


EMITTERS = [
    Emitter("cub", "cub", "cub/cub.cuh", "nvidia_cuda_cccl", build_cub,
            lambda root: version_macros(root, "cub/version.cuh", "CUB_VERSION")),
    Emitter("thrust", "thrust", "thrust/version.h", "nvidia_cuda_cccl", build_thrust,
            lambda root: version_macros(root, "thrust/version.h", "THRUST_VERSION")),
]
