"""Per-file facts the hazard passes share, computed once and kept in `ctx.scratch`."""

from __future__ import annotations

import bisect

from musify.frontend.scanner import Ctx, Directive
from musify.passes._base import PassContext
from musify.passes.hazards.common import FunctionList, device_functions, qualifier_words

_FUNCTIONS = "hazards.device_functions"
_DIRECTIVE_STARTS = "hazards.directive_starts"


def device_functions_of(ctx: PassContext) -> FunctionList:
    """The file's `__global__`/`__device__` function definitions."""
    found = ctx.scratch.get(_FUNCTIONS)
    if found is None:
        tagged = ctx.ruleset.tagged
        found = device_functions(ctx.text, ctx.scan.code_map(), tagged("kernel-qualifier"),
                                 tagged("device-qualifier"), ctx.scan.directives)
        ctx.scratch[_FUNCTIONS] = found
    return found


def device_functions_found(ctx: PassContext) -> bool:
    """`device_functions_of` was asked of this file already (asking again costs nothing)."""
    return _FUNCTIONS in ctx.scratch


def qualifier_triggers(ruleset) -> tuple[str, ...]:
    """The qualifier words, one of which a file's text holds wherever `device_functions_of` finds
    a function: the `triggers` of each pass whose every finding is in a device function
    (warp_size, features), so the runner does not call them on a file without one
    (`literals.file_bits`; half the files of a tree are host code), and they need not ask."""
    tagged = ruleset.tagged
    return qualifier_words(tagged("kernel-qualifier"), tagged("device-qualifier"))


def directive_at(ctx: PassContext, offset: int) -> Directive | None:
    """The preprocessor directive whose logical line holds `offset`."""
    starts = ctx.scratch.get(_DIRECTIVE_STARTS)
    if starts is None:
        starts = [d.start for d in ctx.scan.directives]
        ctx.scratch[_DIRECTIVE_STARTS] = starts
    i = bisect.bisect_right(starts, offset) - 1
    if i >= 0 and ctx.scan.directives[i].start <= offset < ctx.scan.directives[i].end:
        return ctx.scan.directives[i]
    return None


def without_comments(ctx: PassContext, start: int, end: int) -> str:
    """text[start:end] with each comment replaced by one space."""
    spans = ctx.scan.spans  # comments and literals in order: the comments are read from them
    i = max(0, ctx.scan.code_map().last_span_before(start))
    out, pos = [], start
    while i < len(spans) and spans[i][0] < end:
        s, e, where = spans[i]
        i += 1
        if e <= start or where != Ctx.COMMENT:
            continue
        out.append(ctx.text[pos:max(pos, s)])
        out.append(" ")
        pos = max(pos, e)
    out.append(ctx.text[pos:end])
    return "".join(out)
