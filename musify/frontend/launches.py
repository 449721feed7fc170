"""Kernel launch and kernel definition detection.

`<<<...>>>` is the one piece of CUDA syntax that no C++ compiler accepts, so both the migration
record (launch counts) and the emulator (which rewrites launches into plain C++) need to find
launches exactly: the kernel expression (with namespaces and template arguments), the 2-4 launch
parameters, and the argument list. This works on text with the scanner's code map, so it sees
launches inside macro bodies and inactive `#if` branches too and never one inside a comment or
string; it is linear in the file size and needs no parse of the whole file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from musify.classes import named_tuple
from musify.frontend import compiled
from musify.frontend.launch_shape import reserved_words, well_formed_python
from musify.frontend.scanner import CodeMap, LineIndex, scan
from musify.patterns import lazy_pattern

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")", "]", "}"}
_IDENT_END = lazy_pattern(globals(), "_IDENT_END", r"[A-Za-z_]\w*$")
# words written with their own parenthesised arguments between a function's qualifiers and its
# name (`__global__ void __launch_bounds__(256) k(...)`): never the name declared
ATTRIBUTE_WORDS = frozenset({"__launch_bounds__", "__attribute__", "__declspec", "alignas", "__align__"})
_DEF_NAME = lazy_pattern(globals(), "_DEF_NAME", r"([A-Za-z_]\w*)\s*(?:<[^;{()]*>\s*)?\(")


@named_tuple
class Launch:
    start: int  # where the kernel expression starts
    kernel: str  # e.g. "ns::kern<float, 4>"
    config_start: int  # offset of "<<<"
    config_end: int  # offset just after ">>>"
    config: list[str]  # the launch parameters, stripped
    args_start: int  # offset of "("
    args_end: int  # offset just after the matching ")"
    line: int

    @property
    def end(self) -> int:
        return self.args_end


@named_tuple
class KernelDef:
    offset: int  # offset of __global__
    name: str
    line: int


def _skip_ws_back(text: str, i: int) -> int:
    """Index of the last non-space character at or before i (or -1)."""
    while i >= 0 and text[i] in " \t\r\n\\":
        i -= 1
    return i


_BACK_LIMIT = 4096  # template arguments of a launched kernel never run longer; keeps the scan linear


def match_angle_back(text: str, i: int) -> int:
    """text[i] == '>': index of the matching '<' (nesting counted), or -1."""
    depth = 0
    floor = max(-1, i - _BACK_LIMIT)
    while i > floor:
        c = text[i]
        if c == ">":
            depth += 1
        elif c == "<":
            depth -= 1
            if depth == 0:
                return i
        elif c in ";{}":
            return -1
        i -= 1
    return -1


def _word_run_start(text: str, lo: int, end: int) -> int:
    """Where the run of `\\w` characters ending just before `end` starts (not before `lo`)."""
    r = end
    while r > lo and (text[r - 1].isalnum() or text[r - 1] == "_"):
        r -= 1
    return r


def _first_ident_start(text: str, lo: int, end: int) -> int:
    for s in range(lo, end):
        c = text[s]
        if c == "_" or "a" <= c <= "z" or "A" <= c <= "Z":
            return s
    return -1


def ident_ending_at(text: str, lo: int, hi: int) -> int:
    """`_IDENT_END.search(text, lo, hi).start()` (-1 for no match), read backwards from `hi`: the
    search tried every start in the window, 30 microseconds a launch. A match ends at `hi`, or
    (`$`) before a newline at `hi - 1`; it starts at the first `[A-Za-z_]` of the word run there."""
    starts = []
    for end in (hi, hi - 1) if hi - 1 >= lo and text[hi - 1] == "\n" else (hi,):
        s = _first_ident_start(text, _word_run_start(text, lo, end), end)
        if s >= 0:
            starts.append(s)
    return min(starts, default=-1)


def _kernel_start(text: str, lt: int) -> int:
    """Start offset of the kernel expression that ends just before `<<<` at `lt` (or -1):
    `_claunch.kernel_start` where it was built (tests/test_claunch_equivalence.py), else
    `_kernel_start_python`."""
    if _NATIVE is None:
        return _kernel_start_python(text, lt)
    return _NATIVE.kernel_start(text, lt)


def _kernel_start_python(text: str, lt: int) -> int:
    """`_kernel_start` in Python: the reference the compiled one is tested against."""
    i = _skip_ws_back(text, lt - 1)
    start = -1
    while i >= 0:
        if text[i] == ">":
            j = match_angle_back(text, i)
            if j < 0:
                return -1
            i = _skip_ws_back(text, j - 1)
        found = ident_ending_at(text, max(0, i - 256), i + 1)  # bounded: never rescan the file
        if found < 0:
            return start if text[i] != ")" else -1
        start = found
        k = _skip_ws_back(text, start - 1)
        if k >= 1 and text[k] == ":" and text[k - 1] == ":":
            i = _skip_ws_back(text, k - 2)
            if i < 0 or not (text[i].isalnum() or text[i] in "_>"):
                return k - 1  # a leading '::' (global namespace)
            continue
        return start
    return start


_INTERESTING = re.compile(r"[()\[\]{},;>)]")


def _match_forward(text: str, i: int, codemap: CodeMap, stop: str) -> tuple[int, list[tuple[int, int]]]:
    """From i, find `stop` at bracket depth 0 in code. Returns (offset of stop, comma-separated parts).

    Jumps from one bracket, comma or `>` to the next and over whole comments and literals, so the
    cost is in the number of such characters, not in the length of the text."""
    depth = 0
    parts = []
    part_start = i
    first = stop[0]
    while True:
        m = codemap.search(_INTERESTING, text, i)
        if m is None:
            return -1, parts
        i = m.start()
        c = text[i]
        if depth == 0 and c == first and text.startswith(stop, i):
            parts.append((part_start, i))
            return i, parts
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth < 0:
                return -1, parts
        elif c == "," and depth == 0:
            parts.append((part_start, i))
            part_start = i + 1
        elif c == ";" and depth == 0:
            return -1, parts
        i += 1


_TOKENS = lazy_pattern(globals(), "_TOKENS", r"<<<|>>>|[()\[\]{};]")


@named_tuple
class _Structure:
    # only for the '(' that directly follows a '>>>' (an argument list: the one kind asked about;
    # every bracket of a 50 MB file in a dictionary was half a gigabyte)
    closer: dict[int, int]  # such an opening bracket -> its closing bracket (-1: never closed)
    semicolon: set[int]  # such opening brackets with a ';' directly inside (not in a nested bracket)
    config_end: dict[int, int]  # '<<<' -> the '>>>' ending it at the same depth (-1: ';' or a closer first)


_BLANK = " \t\r\n\\"  # what may stand between '>>>' and its argument list


_NATIVE = compiled.load("_claunch")  # the compiled bracket pass (_claunch.c), or None


def _structure(text: str, codemap: CodeMap) -> _Structure:
    """`_structure_python`, in C where `_claunch` was built (the same answers, proven by
    tests/test_claunch_equivalence.py; on small files this pass was a tenth of a migration)."""
    if _NATIVE is None:
        return _structure_python(text, codemap)
    return _Structure(*_NATIVE.structure(text, codemap.spans()))


def _structure_python(text: str, codemap: CodeMap) -> _Structure:
    """One pass over the brackets, ';', '<<<' and '>>>' in code. Every question launch detection
    asks ("where does this launch configuration end?", "where do these arguments end?") is then
    a dictionary look-up, so a file of unclosed `<<<` costs one pass, not one pass per `<<<`."""
    out = _Structure({}, set(), {})
    stack: list[tuple[int, list[int], bool]] = []  # opener, the '<<<' pending outside it, asked about
    pending: list[int] = []  # '<<<' at the current depth still looking for their '>>>'
    spans = codemap.spans()  # comments and literals, in order: tokens starting in one are skipped
    after_config = -1  # just after the last '>>>' in code
    j = 0
    for m in _TOKENS.finditer(text):
        i = m.start()
        while j < len(spans) and spans[j][1] <= i:
            j += 1
        if j < len(spans) and spans[j][0] <= i:
            continue
        tok = m.group()
        config_just_ended, after_config = after_config, -1  # only blanks may follow it, no token
        if tok == "<<<":
            pending.append(i)
        elif tok == ">>>" or tok == ";" or tok in _CLOSE:
            for lt in pending:
                out.config_end[lt] = i if tok == ">>>" else -1
            pending = []
            if tok == ">>>":
                after_config = i + 3
            elif tok == ";" and stack:
                if stack[-1][2]:
                    out.semicolon.add(stack[-1][0])
            elif tok in _CLOSE and stack:
                opener, pending, asked = stack.pop()
                if asked:
                    out.closer[opener] = i
        else:  # an opening bracket
            asked = tok == "(" and config_just_ended >= 0 and not text[config_just_ended:i].strip(_BLANK)
            stack.append((i, pending, asked))
            pending = []
    for lt in pending:
        out.config_end[lt] = -1
    for opener, outer, asked in stack:
        if asked:
            out.closer[opener] = -1
        for lt in outer:
            out.config_end[lt] = -1
    return out


def find_launches(text: str, codemap: CodeMap | None = None, lines: LineIndex | None = None) -> list[Launch]:
    """Every `kernel<<<config>>>(args)` in code (macro bodies included), in order."""
    return list(iter_launches(text, codemap, lines))


def iter_launches(text: str, codemap: CodeMap | None = None, lines: LineIndex | None = None) -> Iterator[Launch]:
    """`find_launches` one at a time (a 50 MB file has hundreds of thousands)."""
    if "<<<" not in text:
        return
    codemap = codemap or scan(text).code_map()
    lines = lines or LineIndex(text)
    for start, lt, gt, a, close in launch_spans(text, codemap):
        _, parts = _match_forward(text, lt + 3, codemap, ">>>")
        config = [text[s:e].strip() for s, e in parts]
        yield Launch(start, kernel_text(text, start, lt), lt, gt + 3, config, a, close + 1, lines.line_of(start))


def kernel_text(text: str, start: int, lt: int) -> str:
    """A launch's kernel expression as `Launch.kernel` shows it: text[start:lt] on one line."""
    return _BLANKS.sub(" ", text[start:lt]).strip()


_BLANKS = lazy_pattern(globals(), "_BLANKS", r"\s+")


def launch_spans(text: str, codemap: CodeMap, present: bool = False) -> Iterator[tuple[int, int, int, int, int]]:
    """Where each launch `iter_launches` finds is, without the rest of its `Launch` (the structure
    pass only counts and parses them): (kernel start, '<<<', '>>>', '(', ')') offsets. In C
    where `_claunch` was built (`launches`: the bracket pass and this loop, no dictionaries in
    between; tests/test_claunch_equivalence.py), else `launch_spans_python`. `present`: the
    caller knows the text holds "<<<" (the test is not made again)."""
    if not present and "<<<" not in text:
        return iter(())
    if _NATIVE is None:
        return launch_spans_python(text, codemap)
    return iter(_NATIVE.launches(text, codemap.spans()))


def launch_spans_python(text: str, codemap: CodeMap) -> Iterator[tuple[int, int, int, int, int]]:
    """`launch_spans` in Python: the reference the compiled one is tested against."""
    if "<<<" not in text:
        return
    shape = _structure_python(text, codemap)
    config_end, closer, semicolon = shape.config_end, shape.closer, shape.semicolon
    find, n = text.find, len(text)
    pos = 0
    while True:
        lt = find("<<<", pos)
        if lt < 0:
            break
        pos = lt + 3
        gt = config_end.get(lt, -1)  # absent: not in code, or inside another '<<<'
        if gt < 0:
            continue
        a = gt + 3
        while a < n and text[a] in " \t\r\n\\":
            a += 1
        close = closer.get(a, -1) if a < n and text[a] == "(" else -1
        if close < 0 or a in semicolon:
            continue
        start = _kernel_start_python(text, lt)
        if start < 0:
            continue
        yield start, lt, gt, a, close
        pos = close + 1


def find_kernel_defs(text: str, codemap: CodeMap | None = None,
                     lines: LineIndex | None = None) -> list[KernelDef]:
    """Every `__global__` function declaration or definition in code, with its name."""
    return list(iter_kernel_defs(text, codemap, lines))


def iter_kernel_defs(text: str, codemap: CodeMap | None = None,
                     lines: LineIndex | None = None) -> Iterator[KernelDef]:
    """`find_kernel_defs` one at a time."""
    if "__global__" not in text:
        return
    codemap = codemap or scan(text).code_map()
    lines = lines or LineIndex(text)
    for offset, name in _kernel_def_names(text, codemap):
        yield KernelDef(offset, name, lines.line_of(offset))


def count_kernel_defs(text: str, codemap: CodeMap, present: bool = False) -> int:
    """How many `iter_kernel_defs` yields, without making them (the structure pass only counts):
    `_claunch.count_kernels` where it was built (tests/test_claunch_equivalence.py), else
    `count_kernel_defs_python`. `present`: the caller knows the text holds "__global__"."""
    if not present and "__global__" not in text:
        return 0
    if _NATIVE is None:
        return count_kernel_defs_python(text, codemap)
    return _NATIVE.count_kernels(text, codemap.spans(), "__global__", _NOT_NAME_LIST)


def count_kernel_defs_python(text: str, codemap: CodeMap) -> int:
    """`count_kernel_defs` in Python: the reference the compiled count is tested against."""
    if "__global__" not in text:
        return 0
    return sum(1 for _ in _kernel_def_names(text, codemap))


def structure_counts(text: str, spans: list) -> tuple[int, int | list[tuple[int, int, int, int, int]]]:
    """The structure pass's two searches in one compiled call (`_claunch.structure_counts`):
    (`count_kernel_defs`, the rows of `launch_spans`, or only their number where
    `launch_shape.well_formed` reads every one, so that none needs a parse). `spans`: the
    scan's comment and literal spans (no code map is made). Only where `_claunch` was built
    (`NATIVE_COUNTS`); `structure_counts_python` is the reference (tests/test_structure_counts.py)."""
    reserved = _RESERVED[0] if _RESERVED else _reserved()
    return _NATIVE.structure_counts(text, spans, KERNEL_WORD, _NOT_NAME_LIST, reserved)


def _reserved() -> frozenset[str] | None:
    """`reserved_words()` once something made them (they load tree-sitter: a run whose files
    hold kernels and no launch never needs it); None before, which `structure_counts` answers
    with the rows, so the caller's `well_formed` makes them."""
    if reserved_words.cache_info().currsize:
        _RESERVED.append(reserved_words())
        return _RESERVED[0]
    return None


_RESERVED: list[frozenset[str]] = []


NATIVE_COUNTS = _NATIVE is not None  # `structure_counts` can be called


def structure_counts_python(text: str, codemap: CodeMap) -> tuple[int, int | list[tuple[int, int, int, int, int]]]:
    """`structure_counts` from the Python searches it stands for."""
    launches = list(launch_spans_python(text, codemap))
    reserved = reserved_words()
    if all(well_formed_python(text, start, close + 1, reserved) for start, _, _, _, close in launches):
        return count_kernel_defs_python(text, codemap), len(launches)
    return count_kernel_defs_python(text, codemap), launches


_NOT_NAME_LIST = tuple(sorted(ATTRIBUTE_WORDS))
KERNEL_WORD = "__global__"  # what `count_kernel_defs` looks for: without it in the text, no kernel


_KERNEL_WORD = lazy_pattern(globals(), "_KERNEL_WORD", r"__global__")  # a literal: the regex engine's fast search (no look-behind)


def _kernel_def_names(text: str, codemap: CodeMap) -> Iterator[tuple[int, str]]:
    """(offset of `__global__`, the name declared) for each kernel declaration or definition."""
    for m in _KERNEL_WORD.finditer(text):
        s, end = m.span()
        if (s and (text[s - 1].isalnum() or text[s - 1] == "_")) or text[end:end + 1].isalnum() \
                or text[end:end + 1] == "_":
            continue  # part of a longer word
        if not codemap.is_code(s):
            continue
        for d in _DEF_NAME.finditer(text, end, min(len(text), end + 400)):
            if d.group(1) not in ATTRIBUTE_WORDS:
                yield s, d.group(1)
                break
