"""MU1003 in the MUSA -> CUDA direction: a MUSA name that several CUDA names share can only go
back to one of them, so its first use in each file says which was chosen and what the others were
(the choice itself is made by `musify.rules.reverse.reverse_ruleset`)."""

from __future__ import annotations

from musify.engine.edits import Edit
from musify.frontend.scanner import Ctx
from musify.passes._base import PassContext
from musify.rules.reverse import reverse_choices

_NAME_CONTEXTS = frozenset({Ctx.CODE, Ctx.DIRECTIVE, Ctx.MACRO, Ctx.MACRO_NAME})


def active(ruleset, options) -> bool:
    """Only a reversed rule set has shared MUSA names (the runner calls it only then)."""
    return bool(reverse_choices(ruleset))


def run(ctx: PassContext) -> list[Edit]:
    """Pass: MU1003 at the first use in a file of each MUSA name that several CUDA names share."""
    choices = reverse_choices(ctx.ruleset)
    if not choices:
        return []
    seen: set[str] = set()
    uses = [(i.start, i.name) for i in ctx.scan.idents.select(choices, _NAME_CONTEXTS)]
    uses += [(inc.start, inc.path) for inc in ctx.scan.includes if inc.path in choices]
    for start, name in sorted(uses):
        if name in seen:
            continue
        seen.add(name)
        options = choices[name]
        ctx.warn("MU1003", start, name, choices=", ".join(options), chosen=options[0])
    return []
