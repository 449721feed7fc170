"""Groups the preprocessor always skips: the lines under `#if 0` (or `#if false`) up to their
`#else`, `#elif` or `#endif`.

Real headers park other languages there (PyTorch's `Dispatch_v2.h` keeps the Python that generates
it under `#if 0`), and an apostrophe in that text is a lone `'`. GCC and Clang only warn about an
unterminated literal in a skipped group, so musify must not call it an error there (exit status 1
on a header that compiles). Only the literal `0` / `false` conditions count: anything that needs a
macro's value is not known to be skipped.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence

from musify.frontend.scanner import Directive
from musify.patterns import lazy_pattern

_ALWAYS_FALSE = lazy_pattern(globals(), "_ALWAYS_FALSE", r"#\s*if(?:\s*\(\s*(?:0|false)\s*\)|\s+(?:0|false)\b)\s*(?://.*|/\*.*)?$", re.DOTALL)
_OPENS = frozenset({"if", "ifdef", "ifndef"})
_SWITCHES = frozenset({"elif", "else", "elifdef", "elifndef"})


def skipped_groups(text: str, directives: Sequence[Directive]) -> list[tuple[int, int]]:
    """(start, end) of each always-skipped group, in order: from the end of its `#if 0` line to
    the `#` of the directive that closes it (the end of the text when none does)."""
    groups: list[tuple[int, int]] = []
    stack: list[int] = []  # per open conditional: where its skipped group began, or -1
    for d in directives:
        if d.keyword in _OPENS:
            zero = d.keyword == "if" and _ALWAYS_FALSE.match(text, d.start, d.end) is not None
            stack.append(d.end if zero else -1)
        elif d.keyword in _SWITCHES or d.keyword == "endif":
            if not stack:
                continue  # an unbalanced directive: nothing is known to be skipped
            began = stack.pop() if d.keyword == "endif" else stack[-1]
            if began >= 0:
                groups.append((began, d.start))
            if d.keyword != "endif":
                stack[-1] = -1  # what follows `#else` of `#if 0` is compiled
    groups.extend((began, len(text)) for began in stack if began >= 0)
    groups.sort()
    return _outermost(groups)


def _outermost(groups: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Groups nested in another (an `#if 0` inside an `#if 0`) dropped: the list stays sorted by
    start and by end, so one bisection answers `inside`."""
    out: list[tuple[int, int]] = []
    for start, end in groups:
        if out and start < out[-1][1]:
            continue
        out.append((start, end))
    return out


def inside(groups: list[tuple[int, int]], offset: int) -> bool:
    """Is `offset` in one of `groups`: sorted (start, end) spans that do not overlap, such as
    `skipped_groups` gives (identifiers asks it of a file's enum bodies too)?"""
    i = bisect.bisect_right(groups, (offset, math.inf)) - 1
    return i >= 0 and groups[i][0] <= offset < groups[i][1]
