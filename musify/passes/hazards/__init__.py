"""Semantic hazards: renames that compile but are wrong, and features MUSA lacks (MUSA_FACTS §2).

One small module per hazard; each is a pass `run(ctx) -> list[Edit]`. `docs/hazards.md` describes
them for users, `docs/diagnostics/MU2*.md` each diagnostic. The registry names the modules; they
are imported when a file first needs them (`musify.passes.resolve`).
"""

from __future__ import annotations

ENTRIES = (
    ("arch_guards", "musify.passes.hazards.arch_guards"),
    ("version_macros", "musify.passes.hazards.version_macros"),
    ("warp_size", "musify.passes.hazards.warp_size"),
    ("warp_macros", "musify.passes.hazards.warp_macros"),
    ("warp_constants", "musify.passes.hazards.warp_constants"),
    ("inline_asm", "musify.passes.hazards.inline_asm"),
    ("features", "musify.passes.hazards.features"),
    ("self_defines", "musify.passes.hazards.self_defines"),
    ("shims", "musify.passes.hazards.shims"),
)

