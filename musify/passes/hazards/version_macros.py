"""Version macros: a comparison of a CUDA version macro with a number is reported at the line.

`CUDA_VERSION` counts CUDA releases as major*1000 + minor*10 (12080 is CUDA 12.8); MUSA's
`MUSA_VERSION` is on its own scale (SDK 5.2 is 50200). `#if CUDA_VERSION >= 12080` renamed by the
rules is wrongly true on MUSA (torchada PR #100), and no number translates one scale into the
other, so the rename follows the rules and the comparison gets a diagnostic naming both scales.
"""

from __future__ import annotations

import re

from musify.engine.edits import Edit
from musify.frontend.scanner import Ctx
from musify.passes._base import PassContext
from musify.passes.hazards.common import comparison_at, line_end

# The CUDA version macros: toolkit, runtime, compiler (nvcc's __CUDACC_VER_*__ and the __NVCC_VER*
# spellings some projects define), and the API version selectors.
VERSION_MACRO = re.compile(
    r"(?:CUDA_VERSION|CUDART_VERSION|__CUDA_API_VERSION|__CUDACC_VER_(?:MAJOR|MINOR|BUILD)__|"
    r"__CUDACC_VER__|__CUDA_API_VER_(?:MAJOR|MINOR)__|__NVCC_VER\w*)"
)
_LOOKED_AT = frozenset({Ctx.CODE, Ctx.DIRECTIVE, Ctx.MACRO})


def decode(name: str, value: int) -> str:
    """What a number means on CUDA's scale, for the message."""
    if name in ("CUDA_VERSION", "CUDART_VERSION", "__CUDA_API_VERSION", "__CUDACC_VER__") and value >= 1000:
        return f"{value} is CUDA {value // 1000}.{value % 1000 // 10}"
    if "MAJOR" in name:
        return f"CUDA major version {value}"
    if "MINOR" in name:
        return f"CUDA minor version {value}"
    return f"{value} on CUDA's scale"


def run(ctx: PassContext) -> list[Edit]:
    text = ctx.text
    if ctx.options.reverse:
        return []
    for ident in ctx.scan.idents:
        if ident.ctx not in _LOOKED_AT or not VERSION_MACRO.fullmatch(ident.name):
            continue
        cmp = comparison_at(text, ident.start, ident.end, line_end(text, ident.end))
        if cmp is None or cmp.value is None:
            continue
        rule = ctx.ruleset.lookup(ident.name)
        renamed = f", renamed to {rule.replacement}" if rule is not None and rule.replacement else ""
        expr = " ".join(text[cmp.expr_start:cmp.expr_end].split())
        ctx.warn("MU2010", ident.start, ident.name, expr=expr, decoded=decode(ident.name, cmp.value),
                 renamed=renamed)
    return []
