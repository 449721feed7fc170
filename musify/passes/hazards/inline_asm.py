"""Inline assembly (`asm`, `asm volatile`, `__asm__`): an error at each use, never a change.

The assembly is PTX, which does not assemble on MUSA. Disabling it (torchada's `if(0) asm volatile`)
produced silent garbage in a real model (torchada PR #87), so the code is left exactly as written
and the diagnostic carries the fix. Hopper-only instructions inside (wgmma, fp8 MMA) are named too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from musify.engine.edits import Edit
from musify.passes._base import PassContext

_ASM = re.compile(r"(?<![\w.])(asm|__asm__|__asm)(\s+(?:volatile|__volatile__)|\s*(?:volatile|__volatile__)(?=\s*\())?\s*\(")
# each with the literals one of which every match contains: the search (which opens with `\b`,
# so the regex engine tries every offset) runs only on bodies holding one
_HOPPER = ((re.compile(r"\bwgmma\."), "warpgroup MMA (wgmma)", ("wgmma.",)),
           (re.compile(r"\bmma\.\S*\.e[45]m[23]\b|\.e4m3\.e4m3|\.e5m2\.e5m2"), "fp8 MMA",
            ("mma.", ".e4m3.e4m3", ".e5m2.e5m2")))


def run(ctx: PassContext) -> list[Edit]:
    text = ctx.text
    if "asm" not in text:
        return []
    codemap = ctx.scan.code_map()
    for m in asm_matches(text):
        if not codemap.is_code(m.start()):
            continue
        spelled = " ".join(text[m.start():m.end() - 1].split())
        ctx.warn("MU2040", m.start(), spelled)
        body_end = _statement_end(text, m.end())
        body = text[m.end():body_end]
        for pattern, feature, literals in _HOPPER:
            if any(literal in body for literal in literals) and pattern.search(body):
                ctx.warn("MU2035", m.start(), spelled, what=f"'{spelled}' with {feature}", feature=feature)
    return []


def asm_matches(text: str) -> Iterator[re.Match[str]]:
    """`_ASM.finditer(text)`, with the pattern tried only where a match can start: at each "asm"
    and two characters before one that follows "__". A search from every offset (the pattern
    opens with a look-behind, which defeats the regex engine's literal scan) cost more than the
    rest of the pass on headers that mention "asm" once."""
    end = 0
    at = text.find("asm")
    while at >= 0:
        for start in ((at - 2, at) if at >= 2 and text.startswith("__", at - 2) else (at,)):
            m = _ASM.match(text, start) if start >= end else None
            if m is not None:
                yield m
                end = m.end()
                break
        at = text.find("asm", at + 1)


def _statement_end(text: str, pos: int) -> int:
    end = text.find(";", pos)
    return len(text) if end < 0 else end
