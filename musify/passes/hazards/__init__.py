"""Semantic hazards: renames that compile but are wrong, and features MUSA lacks (MUSA_FACTS §2).

One small module per hazard; each is a pass `run(ctx) -> list[Edit]`. `docs/hazards.md` describes
them for users, `docs/diagnostics/MU2*.md` each diagnostic.
"""

from musify.passes.hazards import (
    arch_guards,
    features,
    inline_asm,
    self_defines,
    shims,
    version_macros,
    warp_size,
)

PASSES = [
    ("arch_guards", arch_guards.run),
    ("version_macros", version_macros.run),
    ("warp_size", warp_size.run),
    ("inline_asm", inline_asm.run),
    ("features", features.run),
    ("self_defines", self_defines.run),
    ("shims", shims.run),
]
