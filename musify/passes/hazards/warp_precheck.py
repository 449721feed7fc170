"""What text the warp-size pass can report on, asked before any parse or function search.

The pass (`warp_size`) parses a device function only when its body holds a trigger and its text
passes `may_report`; both are plain searches for certain numbers and names. The trigger search
finds in a file whatever it finds in one of its functions, so `file_may_report` asks it once of
the whole file first: a file where it finds nothing cannot report, and its device functions are
never even looked for (on a corpus of small CUDA files two files in three with device functions
have no trigger at all). tests/test_warp_size_precheck.py and tests/test_idle_prefilters.py
check both against the pass run without them.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from musify.frontend import compiled
from musify.passes.hazards.common import FunctionList
from musify.passes.hazards.warp_operands import bits_read, code_test, compared_32, lane_operand, name_uses
from musify.patterns import lazy_pattern

if TYPE_CHECKING:
    from musify.passes._base import PassContext

# Only text that some check can report: an integer literal as the checks read one (`int_value`:
# hex or decimal, leading zeros, u/l suffixes) of 31, 32 or the full mask, or of 5 after `>>`; a
# `~0`; 16 (an offset loop or a shuffle offset) only where the body shuffles; a lane-mask result
# anywhere. A body that merely uses warpSize or shuffles with computed offsets is warp-size
# agnostic and is not parsed at all. (A decimal digit beyond ASCII, which `int_value` reads too,
# is a trigger wherever it stands.)
TRIGGER = lazy_pattern(globals(), "TRIGGER", r"~\s*0|(?<![\w.])(?:0[xX]0*(?:1[fF]|20|[fF]{8})|0*(?:31|32|4294967295))"
                                             r"[uUlL]*(?![\w.])|>>\s*(?:0[xX]0*5|0*5)[uUlL]*(?![\w.])|(?![0-9])\d")
SIXTEEN = lazy_pattern(globals(), "SIXTEEN", r"(?<![\w.])(?:0[xX]0*10|0*16)[uUlL]*(?![\w.])")
_NATIVE = compiled.load("_claunch")  # `marks` in one compiled pass over the text (_claunch_warp.c), or None
TRIGGER_MARK, SIXTEEN_MARK = 1, 2
# a letter or digit beyond ASCII (`\w` is `str.isalnum` and '_'): where `may_report` always parses
_WIDE_WORD_CHAR = lazy_pattern(globals(), "_WIDE_WORD_CHAR", r"[^\W\x00-\x7f]")


class Names(Protocol):
    """The tagged names `may_report` asks about (`warp_size._Names`)."""

    mask_arg: frozenset[str]
    mask_result: frozenset[str]
    popcount: frozenset[str]
    shuffle: frozenset[str]
    warp_size: frozenset[str]
    thread_index: frozenset[str]


def file_may_report(text: str, shuffles: list[int], results: list[int]) -> bool:
    """False only where no device function of `text` could be checked by the pass: every one it
    checks has a trigger in its body (`TRIGGER`, a use of a lane-mask result, or a use of a
    shuffle and a 16 (`SIXTEEN`)), asked here of the whole file instead. A body ends with its '}',
    which no trigger match reaches, so a match in a body is the same match in the file (the
    look-arounds see the same characters). `shuffles` and `results` are the file's uses of the
    names tagged `shuffle` and `lane-mask-result`. (`may_report` is not asked of the whole file:
    on the files a trigger lets through it cost more than it saved.)"""
    if results:
        return True
    found = marks(text, 0, len(text))
    return found == TRIGGER_MARK or (found == SIXTEEN_MARK and bool(shuffles))


def trigger_uses(ctx: PassContext) -> tuple[list[int], list[int]]:
    """Where the file's code uses the names the rules tag `shuffle` and `lane-mask-result`, in
    order: each a whole word outside comments and literals (`warp_operands.name_uses`, one search
    for both sets). Looked for in the text, not among the scan's candidate names: those hold only
    names with an edit or a diagnostic, and these names MUSA keeps (`__shfl_down_sync`,
    `__ballot_sync`), so a shuffle loop from 16 with a mask variable, or `__popc(__ballot(p))`,
    was never looked at."""
    ruleset = ctx.ruleset
    shuffle, result = ruleset.tagged("shuffle"), ruleset.tagged("lane-mask-result")
    shuffles: list[int] = []
    results: list[int] = []
    either = _either_of(shuffle, result)
    if either:
        for at, name in name_uses(ctx.text, either, code_test(ctx.scan.code_map())):
            if name in shuffle:
                shuffles.append(at)
            if name in result:
                results.append(at)
    return shuffles, results


_EITHER: tuple = (None, None, frozenset())  # the last two tagged sets `_either_of` was given, and their union


def _either_of(shuffle: frozenset[str], result: frozenset[str]) -> frozenset[str]:
    """shuffle | result, made again only when the rule set hands other sets (kept by identity: a
    run has one pair, and adding a rule replaces a tag's set; one tuple, replaced whole, so that a
    thread never reads one pair's union for another)."""
    global _EITHER
    made = _EITHER
    if made[0] is not shuffle or made[1] is not result:
        made = _EITHER = (shuffle, result, shuffle | result)
    return made[2]


def marks(text: str, start: int, end: int) -> int:
    """`TRIGGER_MARK` where `TRIGGER` matches in text[start:end], else `SIXTEEN_MARK` where
    `SIXTEEN` does, else 0: in C where `_claunch` was built (one pass over the text instead of
    two searches and their Python calls; the same answers, tests/test_prefilters.py), else
    `marks_python`."""
    if _NATIVE is not None:
        return _NATIVE.warp_marks(text, start, end)
    return marks_python(text, start, end)


def marks_python(text: str, start: int, end: int) -> int:
    """`marks` in Python: the reference the compiled pass is tested against."""
    if TRIGGER.search(text, start, end):
        return TRIGGER_MARK
    return SIXTEEN_MARK if SIXTEEN.search(text, start, end) else 0


def bodies(text: str, functions: FunctionList, shuffles: list[int], results: list[int]) -> list[int]:
    """The indices of the `functions` of `text` whose body the warp-size pass looks at: a trigger
    in it (`marks`), a use of a lane-mask result in it, or a 16 and a use of a shuffle
    in it (`shuffles` and `results`: the sorted offsets of those uses). In C where `_claunch` was
    built, one call over the functions' array (on every file with a launch the pass asked this of
    each function with a Python call and made the functions to ask it), else `bodies_python`;
    the same answers, tests/test_prefilters.py."""
    if _NATIVE is not None:
        return _NATIVE.warp_bodies(text, functions.rows(), shuffles, results)
    return bodies_python(text, functions, shuffles, results)


def bodies_python(text: str, functions: FunctionList, shuffles: list[int], results: list[int]) -> list[int]:
    """`bodies` in Python: the reference the compiled loop is tested against."""
    out = []
    for k, fn in enumerate(functions):
        found = marks(text, fn.body_start, fn.end)
        if found == TRIGGER_MARK or (results and _any_in(results, fn.body_start, fn.end)) or (
                found == SIXTEEN_MARK and shuffles and _any_in(shuffles, fn.body_start, fn.end)):
            out.append(k)
    return out


def _any_in(offsets: list[int], start: int, end: int) -> bool:
    """Some offset lies in [start, end) (offsets are sorted)."""
    i = bisect.bisect_left(offsets, start)
    return i < len(offsets) and offsets[i] < end


def may_report(snippet: str, names: Names, in_code: Callable[[int], bool] | None = None) -> bool:
    """False only where `_check_function` on `snippet` (a function, qualifiers to '}') could
    report nothing, so its parse is skipped: every diagnostic needs certain names and numbers in
    the function's text, and this asks whether they are there at all (and, for MU2021 and MU2024,
    where a number stands: `lane_operand`, which passes over the numbers in comments and literals
    where `in_code`, given an offset in the snippet, says whether it is code). A number's value is read
    from its spelling (decimal or hex, leading zeros, suffixes: 32 is spelled with "32" or "20",
    31 with "31" or "1f"), so a snippet with a letter or digit beyond ASCII is always parsed:
    `int_value` reads other digits ("٣٢" is 32), and the case-blind thread-name regex matches
    other letters ("tıd" is a "tid"). Other characters beyond ASCII (punctuation, quotes, no-break
    spaces: in the comments of the CUDA headers, where a 600 KB stretch of cuda_runtime_api.h
    read as one device function was parsed for nothing) match nothing these tests look for, and
    neither `int_value` nor the checks' regexes nor `str.lower` turn one into an ASCII letter or
    digit, so every test below holds as it does on ASCII. On a corpus of small files a quarter
    of the functions with a trigger (a `32` that is a tile size, say) were parsed for nothing.
    tests/test_warp_size_precheck.py checks the claim against `_check_function`."""
    if _may_report_ascii(snippet, names, in_code):
        return True
    return not snippet.isascii() and _WIDE_WORD_CHAR.search(snippet) is not None  # asked last: a search


def _may_report_ascii(snippet: str, names: Names, in_code: Callable[[int], bool] | None) -> bool:
    """`may_report` for a snippet with no letter or digit beyond ASCII (on others a superset of
    its answer: every test is a substring test)."""

    def named(wanted: frozenset[str]) -> bool:
        return any(name in snippet for name in wanted)

    # the substring tests first; where they leave a check possible, `warp_operands` reads where
    # its numbers and names stand (the answer is the same in any order: each test is one check's)
    lowered = snippet.lower()  # only A-Z become ASCII letters, so "ffffffff" in it is `[fF]{8}` in the snippet
    full = "~" in snippet or "4294967295" in snippet or "ffffffff" in lowered
    n32 = "32" in snippet or "20" in snippet
    results = named(names.mask_result)
    if named(names.shuffle) and (n32 or "16" in snippet or "10" in snippet):
        return True  # MU2022 (a width of 32), MU2023 (an offset of 16, an offset loop from 16 or to 32)
    if full and ("mask" in lowered or named(names.mask_arg) or results):
        return True  # MU2020: a full mask passed to a mask argument or kept in a mask variable; MU2041: compared with one
    if results and named(names.popcount):
        return True  # MU2041: a lane mask counted
    if results and bits_read(snippet, names.mask_result, in_code):
        return True  # MU2041: a lane mask kept and read as bits
    if n32 and named(names.warp_size) and compared_32(snippet, in_code):
        return True  # MU2025: a 32 compared (with the warp size)
    lane_numbers = n32 or "31" in snippet or "1f" in lowered or (">>" in snippet and "5" in snippet)
    # MU2021, MU2024: arithmetic or a comparison on a thread expression, which needs a thread
    # index or a tid-like name (every variable derived from one starts from one of them), and
    # the number as the bare right operand of the operator (`lane_operand`)
    return lane_numbers and (named(names.thread_index) or thread_named(lowered)) and lane_operand(snippet, in_code)


# `warp_size._THREAD_NAME.search` on ASCII text, as plain substring tests of its lower-cased form:
# each alternative with a `\w*` on one side matches exactly where its fixed part occurs ("ltid"
# and "_lane" hold "tid" and "lane"); the case-blind regex took 200 us on a 1.4 KB function
_THREAD_NAME_PARTS = ("tid", "tx", "lane", "threadid", "thread_id", "localid", "local_id", "warpid", "warp_id")


def thread_named(lowered: str) -> bool:
    """`warp_size._THREAD_NAME.search` finds a name in the ASCII text that `lowered` lower-cases."""
    return any(part in lowered for part in _THREAD_NAME_PARTS)
