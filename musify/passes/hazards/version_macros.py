"""Version macros: a comparison of a CUDA version macro with a number is reported at the line.

The rules tag each version macro with the scale of its value: `version-release` (`CUDA_VERSION`:
major*1000 + minor*10, so 12080 is CUDA 12.8), `version-major`, `version-minor` or
`version-other`. MUSA's own macros are on MUSA's scale (SDK 5.2 is 50200), so `#if CUDA_VERSION
>= 12080` renamed by the rules is wrongly true on MUSA, and no number translates one scale into
the other: the rename follows the rules and the comparison gets a diagnostic naming both scales.
"""

from __future__ import annotations

from operator import is_

from musify.engine.edits import Edit
from musify.frontend.scanner import Ctx
from musify.passes._base import PassContext
from musify.passes.hazards.common import comparison_at, line_end

SCALES = ("version-release", "version-major", "version-minor", "version-other")
_LOOKED_AT = frozenset({Ctx.CODE, Ctx.DIRECTIVE, Ctx.MACRO})


def decode(scale: str, value: int) -> str:
    """What a number means on CUDA's scale, for the message."""
    if scale == "version-release" and value >= 1000:
        return f"{value} is CUDA {value // 1000}.{value % 1000 // 10}"
    if scale == "version-major":
        return f"CUDA major version {value}"
    if scale == "version-minor":
        return f"CUDA minor version {value}"
    return f"{value} on CUDA's scale"


def _scales(ruleset) -> tuple[dict[str, str], frozenset[str]]:
    """Version macro name -> its scale tag, and the names. Made again only when a scale's tagged
    names changed (kept on the rule set, as the warp-size pass keeps its names)."""
    tagged = ruleset.tagged
    sets = (tagged(SCALES[0]), tagged(SCALES[1]), tagged(SCALES[2]), tagged(SCALES[3]))  # asked per file
    made = getattr(ruleset, "_version_scales", None)
    if made is None or not all(map(is_, made[0], sets)):
        out: dict[str, str] = {}
        for scale, names in zip(SCALES, sets):
            for name in names:
                out.setdefault(name, scale)
        made = ruleset._version_scales = (sets, (out, frozenset(out)))  # type: ignore[attr-defined]
    return made[1]


def active(ruleset, options) -> bool:
    """Nothing to say in the MUSA -> CUDA direction (the runner then never calls it)."""
    return not options.reverse


def needs(ruleset) -> frozenset[str]:
    """Every finding is at a use of a version macro (the runner skips a file without one)."""
    return _scales(ruleset)[1]


def run(ctx: PassContext) -> list[Edit]:
    text = ctx.text
    if ctx.options.reverse:
        return []
    scales, names = _scales(ctx.ruleset)
    for ident in ctx.scan.idents.select(names, _LOOKED_AT):
        scale = scales[ident.name]
        cmp = comparison_at(text, ident.start, ident.end, line_end(text, ident.end))
        if cmp is None or cmp.value is None:
            continue
        rule = ctx.ruleset.lookup(ident.name)
        renamed = f", renamed to {rule.replacement}" if rule is not None and rule.replacement else ""
        expr = " ".join(text[cmp.expr_start:cmp.expr_end].split())
        ctx.warn("MU2010", ident.start, ident.name, expr=expr, decoded=decode(scale, cmp.value),
                 renamed=renamed)
    return []
