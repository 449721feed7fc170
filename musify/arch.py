"""The MUSA architecture vocabulary and the arch-guard threshold policy, in one place.

Used by the hazard passes (warp width, arch guards), the build-file passes (`-arch=sm_XX` flags),
the emulator (`--arch`, warp width, the arch macro value) and the CLI (`--arch`, `--arch-map`).

Architectures: `__MUSA_ARCH__` is 210 on mp_21, 220 on mp_22 (MTT S80, S3000, S4000), 310 on mp_31
(MTT S5000); a warp has 128 lanes on mp_21/mp_22 and 32 on mp_31.

The threshold policy says which `__MUSA_ARCH__` value stands for an NVIDIA `__CUDA_ARCH__` one.
`__CUDA_ARCH__` counts NVIDIA generations (700, 800, 860, 900); `__MUSA_ARCH__` counts Moore
Threads ones. There is no true equivalence, so the translation is a policy the user sees in every
diagnostic and can change (`--arch-map 80=220,90=310`, `arch_map = {80 = 220, 90 = 310}` in the
configuration):

* a value with an entry (sm_80 -> 220, sm_90 -> 310, the mapping torchada uses) maps to that entry;
* a value between entries maps like the nearest entry below it (sm_86 and sm_89 are Ampere/Ada
  parts that add little over sm_80, so they take sm_80's 220);
* a value below every entry (sm_70, sm_75, ...) maps to 210, the lowest MUSA architecture: every
  MUSA GPU has __MUSA_ARCH__ >= 210, so a feature older than the policy's first entry counts as
  present everywhere, and `__CUDA_ARCH__ < 700` becomes `< 210`, false on every MUSA GPU.
"""

from __future__ import annotations

from musify.classes import named_tuple


@named_tuple
class Arch:
    name: str  # mp_22
    value: int  # __MUSA_ARCH__
    warp: int  # lanes per warp


MUSA_ARCHES: dict[str, Arch] = {a.name: a for a in (
    Arch("mp_21", 210, 128), Arch("mp_22", 220, 128), Arch("mp_31", 310, 32))}
ARCHES = tuple(MUSA_ARCHES)  # the --arch choices
DEFAULT_ARCH = "mp_22"
WARP_WIDTH = {name: a.warp for name, a in MUSA_ARCHES.items()}
LOWEST_MUSA_ARCH = min(a.value for a in MUSA_ARCHES.values())
CUDA_WARP = 32
# Moore Threads products and their arch, as above (MUSA_FACTS section 2); verify's mcc backend reads
# the GPU's arch from its product name
MUSA_PRODUCTS: dict[str, str] = {"S80": "mp_22", "S3000": "mp_22", "S4000": "mp_22", "S5000": "mp_31"}


def emulator_target(arch: str) -> tuple[str, int, int]:
    """(face, __CUDA_ARCH__/__MUSA_ARCH__ value, warp) for an emulator `--arch`: `sm_XX` is the CUDA
    face at warp 32, `mp_XX` the MUSA face at that part's warp width."""
    if arch in MUSA_ARCHES:
        a = MUSA_ARCHES[arch]
        return "musa", a.value, a.warp
    if arch.startswith("sm_") and arch[3:].isdigit():
        return "cuda", int(arch[3:]) * 10, CUDA_WARP
    raise ValueError(f"unknown arch {arch!r} (sm_XX, {', '.join(ARCHES)})")


def offload_arch(musa_value: int) -> str:
    """The mcc `--offload-arch` name for a `__MUSA_ARCH__` value (220 -> mp_22)."""
    return f"mp_{musa_value // 10}"

DEFAULT_MAP: tuple[tuple[int, int], ...] = ((80, 220), (90, 310))


@named_tuple
class Translation:
    musa: int
    exact: bool  # the value has its own entry in the map
    policy: str  # the sentence shown in the diagnostic


def translate(cuda_arch: int, arch_map: tuple[tuple[int, int], ...]) -> Translation | None:
    """The MUSA value for a `__CUDA_ARCH__` value (e.g. 800), or None when it is not one (e.g. 8)."""
    if cuda_arch < 100 or cuda_arch % 10:
        return None
    sm = cuda_arch // 10
    table = dict(arch_map or DEFAULT_MAP)
    shown = ", ".join(f"sm_{k}->{v}" for k, v in sorted(table.items()))
    if sm in table:
        return Translation(table[sm], True, f"policy sm_{sm} -> {table[sm]} (arch map {shown})")
    lower = [k for k in table if k < sm]
    if lower:
        k = max(lower)
        return Translation(table[k], False,
                           f"sm_{sm} has no entry, so it takes the nearest lower entry sm_{k} -> {table[k]} "
                           f"(arch map {shown})")
    return Translation(LOWEST_MUSA_ARCH, False,
                       f"sm_{sm} is below every entry, so it maps to {LOWEST_MUSA_ARCH}, the lowest MUSA "
                       f"architecture (arch map {shown})")


def parse_arch_map(spec: str | dict) -> tuple[tuple[int, int], ...]:
    """`"80=220,90=310"` (command line) or `{"80": 220, "90": 310}` (configuration) -> sorted pairs."""
    if isinstance(spec, dict):
        items = [(str(k), str(v)) for k, v in spec.items()]
    else:
        items = []
        for part in spec.split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise ValueError(f"bad arch map entry {part.strip()!r}: expected SM=MUSA, e.g. 80=220")
            k, v = part.split("=", 1)
            items.append((k, v))
    out = {}
    for k, v in items:
        k = k.strip().lower().removeprefix("sm_")
        v = v.strip().lower().removeprefix("mp_")
        if not (k.isdigit() and v.isdigit()):
            raise ValueError(f"bad arch map entry {k}={v}: both sides must be numbers, e.g. 80=220")
        musa = int(v) * 10 if len(v) == 2 else int(v)  # mp_22 -> 220
        out[int(k)] = musa
    return tuple(sorted(out.items()))
