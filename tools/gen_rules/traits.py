"""What is special about a generated name, beyond its spelling: the diagnostic its uses raise and
the hazard tags the passes look for (`docs/rules.md`, `musify.rules.model.HAZARDS`).

The passes never spell a CUDA name; they ask the rule database which names carry a tag. For the
names the generator emits, this table is where those tags come from. Patterns are matched against
whole names; a name takes the diagnostic of the first pattern with one and the tags of all.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tools.gen_rules import Record

# (pattern, diagnostic or None, hazard tags)
TRAITS: tuple[tuple[re.Pattern[str], str | None, tuple[str, ...]], ...] = tuple(
    (re.compile(p), d, t) for p, d, t in (
        # Hopper programmatic dependent launch (MU2033), tensor memory accelerator (MU2034),
        # thread block clusters (MU2036): no MUSA counterpart, each use is reported.
        (r"cudaLaunchAttributeProgrammatic\w+|CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC\w+", "MU2033", ()),
        (r"cuTensorMapEncode\w*|cuTensorMapReplace\w*|CUtensorMap\w*|CU_TENSOR_MAP_\w+", "MU2034", ()),
        (r"cuda\w*Cluster\w*|cu[A-Z]\w*Cluster\w*|CU_LAUNCH_ATTRIBUTE_CLUSTER\w*|CU_FUNC_ATTRIBUTE_\w*CLUSTER\w*",
         "MU2036", ()),
        # version numbers on CUDA's scale, compared by the version-macro check
        (r"CUDA_VERSION|CUDART_VERSION|__CUDACC_VER__", None, ("version-release",)),
        (r"__CUDA_API_VER_MAJOR__", None, ("version-major",)),
        (r"__CUDA_API_VER_MINOR__", None, ("version-minor",)),
        # the warp-size check
        (r"__shfl(?:_up|_sync|_up_sync)?", None, ("shuffle",)),
        (r"__shfl_(?:down|xor)(?:_sync)?", None, ("shuffle", "shuffle-offset")),
        (r"__(?:ballot|activemask|match_any_sync)(?:_sync)?", None, ("lane-mask-result",)),
        (r"__(?!barrier_|nvvm_)\w+_sync|__syncwarp", None, ("lane-mask-arg",)),
        (r"__popc", None, ("popcount",)),
        (r"warpSize", None, ("warp-size",)),
        (r"threadIdx|blockDim", None, ("thread-index",)),
        (r"__global__", None, ("kernel-qualifier",)),
        (r"__device__", None, ("device-qualifier",)),
        # what an extended lambda may carry (`[=] __device__ (int i) {...}`): blanked where a launch is parsed
        (r"__host__|__device__", None, ("execution-space",)),
        # a device-wide synchronisation: in device code, dynamic parallelism (MU2032)
        (r"cudaDeviceSynchronize", None, ("device-sync",)),
    )
)


def with_traits(rec: Record) -> Record:
    """`rec` with the diagnostic and hazard tags its name has in TRAITS (headers have none)."""
    if rec.kind == "header":
        return rec
    diag, tags = None, []
    for pattern, d, t in TRAITS:
        if pattern.fullmatch(rec.cuda):
            diag = diag or d
            tags += [x for x in t if x not in tags]
    if diag is None and not tags:
        return rec
    return replace(rec, diag=diag, hazard=tuple(tags))
