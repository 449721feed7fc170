"""Per-file facts the hazard passes share, computed once and kept in `ctx.scratch`."""

from __future__ import annotations

import bisect

from musify.frontend.scanner import Ctx, Directive
from musify.passes._base import PassContext
from musify.passes.hazards.common import FunctionList, device_functions, has_qualifier, qualifier_words

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


_DEVICE_SUFFIXES = (".cu", ".cuh", ".mu", ".muh")


def host_only(ctx: PassContext) -> bool:
    """The file holds no device code: not a CUDA (or MUSA) source by its name, no test of a device
    compilation, and no word the rules tag as a kernel or device qualifier (`__global__`,
    `__device__`) anywhere in its code, macro bodies included (a `#define HD __host__ __device__`
    makes it a device file). Kept for the file: inline assembly asks it for each macro body (valgrind.h
    has 178), the warp-size constants once."""
    found = ctx.scratch.get(_HOST_ONLY)
    if found is None:
        tagged = ctx.ruleset.tagged
        found = ctx.scratch[_HOST_ONLY] = not (
            ctx.path.endswith(_DEVICE_SUFFIXES)
            or any(name in ctx.text for name in _compilation_macros(ctx.ruleset))
            or has_qualifier(ctx.text, ctx.scan.code_map(), tagged("kernel-qualifier"), tagged("device-qualifier")))
    return found


_HOST_ONLY = "hazards.host_only"


def _compilation_macros(ruleset) -> set[str]:
    """The macros tagged `device-compilation` (`__CUDA_ARCH__`, `__CUDACC__`, `__NVCC__`) in both
    spellings: a file half ported, or one ported back, tests the MUSA ones."""
    names = set(ruleset.tagged("device-compilation"))
    for name in list(names):
        rule = ruleset.names.get(name)
        if rule is not None and rule.musa:
            names.add(rule.musa)
    return names
