"""Header names tested in `#if` lines: `__has_include(<cuda_fp16.h>)` names a header as an
`#include` does, and is ported with it.

CCCL (in the CUDA toolkit, CuPy, PyTorch...) guards its optional types with
`#if _CCCL_HAS_INCLUDE(<cuda_fp16.h>)` and then `#include <cuda_fp16.h>`. The include became
`<musa_fp16.h>` while the test kept asking for `<cuda_fp16.h>`, which a MUSA toolkit does not
have: the port compiled without its half-precision support, silently; and the words of the
header name (`cuda_fp16`, `cuda_runtime_api`) were reported as unknown CUDA names (MU1001).

A header test is a name holding `include` or `INCLUDE` (`__has_include`, `__has_include_next`,
a project's wrapper such as `_CCCL_HAS_INCLUDE`) followed by one parenthesised header name, in
the condition of an `#if` or `#elif`, outside comments. Each becomes an `Include` (its
`directive_start` is the `#if`'s) with an include-path span, so the includes pass renames it by
the same header rules and project renames as the `#include` it guards; its words are no longer
identifiers. Both scanners leave this to `apply`, run on their scans alike; the compiled one
counts the `#if` lines that hold the word at all, and a file with none is not looked at.
"""

from __future__ import annotations

import bisect

from musify.frontend.idents import Ctx, IdentList
from musify.frontend.scanner import Include, Scan
from musify.patterns import lazy_pattern

# a name, its parenthesis, one header name in <> or "" and the closing parenthesis
_TEST = lazy_pattern(globals(), "_TEST", r'(?<!\w)([A-Za-z_]\w*)[ \t]*\([ \t]*(?:<([^<>\s"()]+)>|"([^"\\\n]+)")[ \t]*\)')
_CONDITIONS = ("if", "elif")


def apply(text: str, scan: Scan) -> Scan:
    """`scan` with each header test's name as an include (in `includes` and `spans`, in order)
    and no identifier rows inside it: changed in place, and returned."""
    found = [m for d in scan.directives if d.keyword in _CONDITIONS and _holds_include(text, d.start, d.end)
             for m in _tests_in(text, scan.code_map(), d.start, d.end)]
    if not found:
        return scan
    spans, includes = scan.spans, scan.includes
    dropped: list[tuple[int, int]] = []
    for directive_start, start, end, angled in found:
        include = Include(start, end, text[start:end], angled, directive_start)
        includes.insert(bisect.bisect_left(includes, start, key=_start), include)
        at = bisect.bisect_left(spans, start - 1, key=_start)
        if not angled:
            del spans[at]  # the string literal `_tests_in` found there: its inside is a path now
        spans.insert(at, (start, end, Ctx.INCLUDE))
        if angled:
            dropped.append((start, end))
    if dropped:
        scan.idents = _without(scan.idents, dropped)
    scan._codemap = None
    return scan


def _holds_include(text: str, start: int, end: int) -> bool:
    """The word the compiled scanner counts, in text[start:end] (most `#if` lines: no; the
    search below is asked only of the others)."""
    return text.find("include", start, end) >= 0 or text.find("INCLUDE", start, end) >= 0


def _tests_in(text: str, code, start: int, end: int) -> list[tuple[int, int, int, bool]]:
    """(directive start, path start, path end, angled) of each header test in the directive
    text[start:end] whose name stands in code (`code`: the scan's `CodeMap`), and whose header
    name is code (<>) or exactly one string literal ("")."""
    out = []
    for m in _TEST.finditer(text, start, end):
        name = m.group(1)
        if ("include" not in name and "INCLUDE" not in name) or not code.is_code(m.start()):
            continue  # no header test, or one in a comment
        angled = m.group(2) is not None
        s, e = m.span(2 if angled else 3)
        if angled:
            if not all(code.is_code(i) for i in range(s - 1, e + 1)):
                continue  # a comment inside the <...>: not a plain header name
        elif code.context_at(s - 1) != Ctx.STRING or code.span_end(s - 1) != e + 1:
            continue  # (the literal opens at s - 1: the name before it is code)
        out.append((start, s, e, angled))
    return out


def _start(item) -> int:
    return item[0]


def _without(idents: IdentList, ranges: list[tuple[int, int]]) -> IdentList:
    """`idents` less the rows that start inside one of `ranges` (the header names): the rows are
    in order, so each range's are found by bisection and cut out; the names are those the kept
    rows use, in order of first use, as a scan without those rows would give them."""
    a = idents.data
    starts = a[0::4]
    cuts = [(bisect.bisect_left(starts, s), bisect.bisect_left(starts, e)) for s, e in ranges]
    if all(lo == hi for lo, hi in cuts):
        return idents
    rows = a[:]
    for lo, hi in reversed(cuts):
        del rows[4 * lo:4 * hi]
    names = idents.names
    column = rows[2::4]
    order = list(dict.fromkeys(column))  # the name indices still used, in order of first use
    if len(order) != len(names) or order != sorted(order):
        renumber = {old: new for new, old in enumerate(order)}
        rows[2::4] = type(rows)(rows.typecode, [renumber[k] for k in column])
        names = [names[k] for k in order]
    return IdentList(rows, list(names), None)
