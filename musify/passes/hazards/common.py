"""Helpers the hazard passes share: numbers, comparisons next to a name, device function bodies,
the warp width of the target architecture.

Everything here is lexical and works on the scanner's results, so a hazard pass costs nothing on
files without its trigger; only `device_functions` feeds tree-sitter, and only with the bodies a
pass asks for.
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Iterator, Sequence
from functools import lru_cache

from musify.arch import WARP_WIDTH
from musify.classes import named_tuple
from musify.frontend import compiled
from musify.frontend.launches import ATTRIBUTE_WORDS
from musify.frontend.scanner import CodeMap, Directive
from musify.passes.literals import register
from musify.patterns import lazy_pattern
from musify.rows import Rows

_INT = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)")
COMPARE_OPS = ("<=", ">=", "==", "!=", "<", ">")
_OP_AFTER = re.compile(r"\s*(<=|>=|==|!=|<(?![<=])|>(?![>=]))\s*\(?\s*(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)\b")
_OP_BEFORE = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)\s*\)?\s*(<=|>=|==|!=|<|>)\s*$")
_ARITH_AFTER = re.compile(r"\s*(<<|>>|<=|>=|==|!=|<|>|[-+*/%^]|&(?!&)|\|(?!\|))")
_ARITH_BEFORE = re.compile(r"(<<|>>|<=|>=|==|!=|<|>|[-+*/%^&|])\s*$")


def warp_severity(arch: str) -> str:
    """Warp-size hazards break the 128-lane parts outright and only matter for portability on mp_31."""
    return "note" if WARP_WIDTH.get(arch, 128) == 32 else "warning"


def int_value(literal: str) -> int | None:
    m = _INT.fullmatch(literal.strip())
    if not m:
        return None
    return int(m.group(1), 16 if m.group(1)[:2] in ("0x", "0X") else 10)


@named_tuple
class Comparison:  # a NamedTuple: a frozen dataclass's class cost 0.8 ms an import
    """`NAME op NUMBER` or `NUMBER op NAME` around an occurrence of NAME."""

    op: str
    value: int
    num_start: int  # span of the digits (suffix excluded)
    num_end: int
    expr_start: int
    expr_end: int
    name_first: bool


def comparison_at(text: str, start: int, end: int, limit: int) -> Comparison | None:
    """The numeric comparison the name at text[start:end] takes part in, if any."""
    m = _OP_AFTER.match(text, end, limit)
    if m:
        return Comparison(m.group(1), int_value(m.group(2)), m.start(2), m.end(2), start, m.end(3), True)
    lo = max(0, start - 40)
    b = _OP_BEFORE.search(text, lo, start)
    if b:
        return Comparison(_flip(b.group(3)), int_value(b.group(1)), b.start(1), b.end(1), b.start(1), end,
                          False)
    return None


def operator_next_to(text: str, start: int, end: int, limit: int) -> str | None:
    """The arithmetic or comparison operator directly before or after the name, if any."""
    m = _ARITH_AFTER.match(text, end, limit)
    if m:
        return m.group(1)
    b = _ARITH_BEFORE.search(text, max(0, start - 8), start)
    if b and not text[max(0, b.start() - 1):b.start()] in ("&", "|"):  # `&&`/`||` are not arithmetic
        return b.group(1)
    return None


def _flip(op: str) -> str:
    """`800 <= X` is `X >= 800`."""
    return {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)


def line_end(text: str, pos: int) -> int:
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl


@named_tuple
class DeviceFunction:  # a NamedTuple: a `FunctionList` makes one per function read
    start: int  # offset of the first qualifier (__global__/__device__)
    body_start: int  # offset of '{'
    end: int  # offset just after the matching '}'
    name: str
    is_kernel: bool


_make_function = DeviceFunction._make
_DeviceFunction, _new_function = DeviceFunction, tuple.__new__  # `_all_made`: no Python `_make` a row
_NATIVE = compiled.load("_claunch")  # the compiled definition search (_claunch.c), or None
_KEEP_MADE = 6 * 4096  # up to 4,096 functions a file keeps them made (at most about 0.5 MB)


class FunctionList(Rows):
    """Device functions in order, six integers a row (start, body start, end, the name's span,
    is-kernel): a file of 300,000 kernels kept as `DeviceFunction` objects with their names was
    over 200 bytes each. Reads as `DeviceFunction`s, the name cut from the text when read."""

    __slots__ = ("_made", "_starts", "_text")
    WIDTH = 6

    def __init__(self, text: str) -> None:
        super().__init__()
        self._text = text
        self._made: list[DeviceFunction] | None = None
        self._starts: array | None = None  # the body starts, for `holding` (made when first asked)

    def add(self, start: int, body_start: int, end: int, name_start: int, name_end: int, is_kernel: bool) -> None:
        self._push(start, body_start, end, name_start, name_end, 1 if is_kernel else 0)

    def rows(self) -> array:
        """The array of rows itself (six integers a function), for a compiled reader: not a copy."""
        return self._a

    def last_end(self) -> int:
        """The end of the last function (-1 when there is none)."""
        return self._a[-4] if self._a else -1

    def holding(self, offset: int) -> int:
        """The index of the function whose body holds `offset`, or -1: a bisection of the body
        starts (the functions are in order and do not overlap), where a scan of every function
        for every question was quadratic on a generated kernel file (FlashInfer's hold thousands
        of `asm` statements a file, each asked)."""
        starts = self._starts
        if starts is None or len(starts) != len(self):
            starts = self._starts = self.column(1)
        k = bisect.bisect_left(starts, offset) - 1
        return k if k >= 0 and starts[k] < offset < self._a[6 * k + 2] else -1

    def _make(self, row: tuple) -> DeviceFunction:
        s, b, e, ns, ne, k = row
        return _make_function((s, b, e, self._text[ns:ne] if ns >= 0 else "?", k == 1))

    def __iter__(self) -> Iterator[DeviceFunction]:
        if len(self._a) <= _KEEP_MADE:  # a few: made once and kept (passes iterate them often)
            if self._made is None or len(self._made) != len(self):
                self._made = self._all_made()
            return iter(self._made)
        return super().__iter__()

    def _all_made(self) -> list[DeviceFunction]:
        """Every row as `_make` reads it, read from the array in place: the generic iteration's
        six column slices, `zip` and a `_make` call a row were most of what reading a file's one or
        two functions cost (the warp-size pass reads them on every file with a launch)."""
        a, text = self._a, self._text
        return [_new_function(_DeviceFunction, (a[k], a[k + 1], a[k + 2], text[a[k + 3]:a[k + 4]] if a[k + 3] >= 0
                                                else "?", a[k + 5] == 1)) for k in range(0, len(a), 6)]


_NAME_BEFORE_PAREN = lazy_pattern(globals(), "_NAME_BEFORE_PAREN", r"([A-Za-z_]\w*)\s*(?:<[^;{()]*>\s*)?$")


@lru_cache(maxsize=8)
def _qualifier_pattern(words: frozenset[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(w) for w in _pattern_order(words)) + r"(?!\w)")


def _pattern_order(words: frozenset[str]) -> tuple[str, ...]:
    """The words in the order `_qualifier_pattern` tries them (longest first)."""
    return tuple(sorted(words, key=lambda w: (-len(w), w)))


def device_functions(text: str, codemap: CodeMap, kernel_words: frozenset[str],
                     device_words: frozenset[str], directives: Sequence[Directive] = ()) -> FunctionList:
    """Function definitions (not declarations or variables) qualified with one of the words the
    rules tag `kernel-qualifier` or `device-qualifier`, in order. The search is `_claunch`'s
    `definitions` where it was built (a fifth of the warp-size pass in Python; the same answers,
    tests/test_claunch_equivalence.py), which also finds the qualifiers (handed the words in the
    pattern's order: the pattern's search and a list of its matches were half the cost on small
    files), else `device_functions_python`. With the file's `directives`, a qualifier whose
    parameters would open inside a later directive is no definition (`params_in_directive`); the
    compiled search does not know directives, so such a row is dropped here and the search made
    again after its qualifier (rare: one file of the CUDA headers, whose false 594 KB "function"
    the warp-size pass parsed on every run)."""
    if _NATIVE is None:
        return device_functions_python(text, codemap, kernel_words, device_words, directives)
    _, qualifier, kernel, ordered = _qualifiers(kernel_words, device_words)
    out = FunctionList(text)
    if qualifier is None:
        return out
    # the rows as `_add_function` makes them (name span and is-kernel found in C too); words
    # the compiled search does not take (an empty one): their matches found here
    candidates = ordered if all(ordered) else [
        m.span() for m in qualifier.finditer(text)
        if not (m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"))]
    rows = _NATIVE.definitions(text, codemap.spans(), candidates, kernel)
    # a row is looked at again only with a '#' between its qualifier and its body: none from
    # the first qualifier to the last body (most files), no call
    if rows and directives and text.find("#", rows[0] + 1, rows[-5]) >= 0:
        rows = _outside_directives(text, codemap, qualifier, directives, candidates, kernel, rows)
    if rows:
        try:
            out._a = array("i", rows)
        except OverflowError:  # a text over 2 GB: 8-byte rows, as `Rows._push` widens them
            out._a = array("q", rows)
        named_past_attributes(out, text, codemap)
    return out


def named_past_attributes(functions: FunctionList, text: str, codemap: CodeMap) -> None:
    """Give each function whose name was read as an attribute word (`ATTRIBUTE_WORDS`: both
    searches take the name before the first parenthesis after the qualifier, which in
    `__global__ __launch_bounds__(256) void k(...)` is the attribute's) the name before the next
    parenthesis after the attribute's arguments, as the kernel-definition search does
    (`launches.find_kernel_defs`). FlashInfer's generated kernels put `__launch_bounds__` there:
    5,101 of its warp-size findings said "in __launch_bounds__()"."""
    a = functions._a
    renamed = False
    for k in range(0, len(a), FunctionList.WIDTH):
        brace, ns, ne = a[k + 1], a[k + 3], a[k + 4]
        if ns < 0 or text[ns:ne] not in ATTRIBUTE_WORDS:
            continue
        span = _name_after_attributes(text, codemap, ne, brace)
        if span is not None:
            a[k + 3], a[k + 4] = span
            renamed = True
    if renamed:
        functions._made = None


def _name_after_attributes(text: str, codemap: CodeMap, pos: int, brace: int) -> tuple[int, int] | None:
    """The span of the name before the parameters, past the attribute (and any attributes after
    it) whose word ends at `pos`; None where that is not plainly there before the body at `brace`."""
    while True:
        m = codemap.search(_STOP_OR_PAREN, text, pos)  # the attribute's own arguments
        if m is None or text[m.start()] != "(" or m.start() >= brace:
            return None
        close = match_bracket(text, m.start(), codemap)
        if close < 0:
            return None
        m = codemap.search(_STOP_OR_PAREN, text, close + 1)  # the parameters (or another attribute's arguments)
        if m is None or text[m.start()] != "(" or m.start() >= brace:
            return None
        name = _NAME_BEFORE_PAREN.search(text, close + 1, m.start())
        if name is None:
            return None
        if name.group(1) not in ATTRIBUTE_WORDS:
            return name.span(1)
        pos = name.end(1)


def _outside_directives(text: str, codemap: CodeMap, qualifier: re.Pattern[str], directives: Sequence[Directive],
                        candidates: Sequence, kernel: tuple, rows: list[int]) -> list[int]:
    """The compiled search's flat rows less each definition whose parameters open inside a later
    directive, searched again after such a qualifier as `device_functions_python` goes on: a
    row is looked at closer only when a '#' stands between its qualifier and its body."""
    width = FunctionList.WIDTH
    for k in range(0, len(rows), width):
        start, brace = rows[k], rows[k + 1]
        if text.find("#", start + 1, brace) < 0:
            continue
        end = qualifier.match(text, start).end()
        if not params_in_directive(directives, start, codemap.search(_STOP_OR_PAREN, text, end).start()):
            continue
        spans = _NATIVE.qualifier_spans(text, candidates) if isinstance(candidates, tuple) else candidates
        later = [span for span in spans if span[0] >= end]
        rest = _NATIVE.definitions(text, codemap.spans(), later, kernel) if later else []
        return rows[:k] + (_outside_directives(text, codemap, qualifier, directives, later, kernel, rest)
                           if rest else [])
    return rows


def params_in_directive(directives: Sequence[Directive], start: int, paren: int) -> bool:
    """The '(' at `paren` lies in a directive that begins after the qualifier at `start`: those
    are a macro's or a condition's parentheses (`#define Q __device__` then `#if defined(X)`),
    never the parameters of a function the qualifier begins. `directives` in order."""
    i = bisect.bisect_right(directives, paren, key=_directive_start) - 1
    return i >= 0 and directives[i].start > start and paren < directives[i].end


def _directive_start(directive: Directive) -> int:
    return directive.start


def qualifier_words(kernel_words: frozenset[str], device_words: frozenset[str]) -> tuple[str, ...]:
    """The qualifier words, one of which `device_functions` needs in the text to find anything."""
    return _qualifiers(kernel_words, device_words)[0]


def has_qualifier(text: str, codemap: CodeMap, kernel_words: frozenset[str], device_words: frozenset[str]) -> bool:
    """A kernel or device qualifier word stands somewhere in code (macro bodies included), found as
    `device_functions` finds them."""
    words, qualifier, _, _ = _qualifiers(kernel_words, device_words)
    if not words or not any(w in text for w in words):
        return False
    return any(codemap.is_code(m.start()) for m in qualifier.finditer(text)
               if not (m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_")))


_QUALIFIERS: dict[tuple[int, int], tuple] = {}


def _qualifiers(kernel_words: frozenset[str], device_words: frozenset[str]) -> tuple:
    """(every qualifier word, their pattern, the kernel words as a tuple, every qualifier word in
    the pattern's order), made once for a pair of tag sets (kept by identity: a run has one pair)
    rather than a union and a look-up per file."""
    entry = _QUALIFIERS.get((id(kernel_words), id(device_words)))
    if entry is None or entry[0] is not kernel_words or entry[1] is not device_words:
        words = kernel_words | device_words
        register(*words)  # the runner's gate of the passes that need them (`file_facts.qualifier_triggers`)
        if len(_QUALIFIERS) >= 8:
            _QUALIFIERS.clear()
        entry = _QUALIFIERS[(id(kernel_words), id(device_words))] = (
            kernel_words, device_words, tuple(words), _qualifier_pattern(frozenset(words)) if words else None,
            tuple(kernel_words), _pattern_order(frozenset(words)))
    return entry[2:]


def device_functions_python(text: str, codemap: CodeMap, kernel_words: frozenset[str],
                            device_words: frozenset[str], directives: Sequence[Directive] = ()) -> FunctionList:
    """`device_functions` in Python: the reference the compiled search is tested against. The
    bracket pairs the search remembered are let go at the end (no later pass matches brackets;
    on a 50 MB file they were two dictionaries of 300,000 entries)."""
    words = kernel_words | device_words
    out = FunctionList(text)
    if not words or not any(w in text for w in words):
        return out
    qualifier = _qualifier_pattern(frozenset(words))
    pos = 0
    while True:
        m = qualifier.search(text, pos)
        if m is None:
            break
        pos = m.end()
        if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"):
            continue  # inside a longer word
        if not codemap.is_code(m.start()) or m.start() < out.last_end():
            continue
        found = _definition_after(text, m.end(), codemap)
        if found is None or (directives and params_in_directive(directives, m.start(), found[0])):
            continue
        paren, brace, close = found
        _add_function(out, text, kernel_words, m.start(), m.end(), paren, brace, close)
        pos = close
    named_past_attributes(out, text, codemap)
    codemap.forget_brackets()
    return out


def _add_function(out: FunctionList, text: str, kernel_words: frozenset[str], start: int, end: int,
                  paren: int, brace: int, close: int) -> None:
    """One definition: the qualifier at text[start:end], its parameters at `paren`, its body."""
    name_m = _NAME_BEFORE_PAREN.search(text, end, paren)
    name_at = name_m.span(1) if name_m else (-1, -1)
    head = text[start:paren]
    out.add(start, brace, close, *name_at, any(w in head for w in kernel_words))


_STOP_OR_PAREN = re.compile(r"[;=\[(]")
_BODY_OR_END = re.compile(r"[;{]")


def _definition_after(text: str, pos: int, codemap: CodeMap) -> tuple[int, int, int] | None:
    """(offset of '(' of the parameters, of '{', just after '}') when a definition follows `pos`."""
    m = codemap.search(_STOP_OR_PAREN, text, pos)
    if m is None or text[m.start()] != "(":
        return None  # a variable (or nothing)
    paren = m.start()
    close = codemap.closing(_BRACKETS["("], text, paren)  # the reference path: no compiled pairing
    if close < 0:
        return None
    # qualifiers, trailing return type, attributes, initialiser list up to the body
    m = codemap.search(_BODY_OR_END, text, close + 1)
    if m is None or text[m.start()] == ";":
        return None
    brace = m.start()
    end = codemap.closing(_BRACKETS["{"], text, brace)
    return (paren, brace, end + 1) if end >= 0 else None


_PAIRS = {"(": ")", "{": "}", "[": "]"}
_BRACKETS = {o: re.compile(re.escape(o) + "|" + re.escape(c)) for o, c in _PAIRS.items()}


def match_bracket(text: str, i: int, codemap: CodeMap) -> int:
    """Offset of the bracket closing text[i] (same kind, nested, code only), or -1: from the
    compiled pairing of the file's brackets where `_claunch` was built (the same answers,
    tests/test_claunch_equivalence.py)."""
    if _NATIVE is None:
        return codemap.closing(_BRACKETS[text[i]], text, i)
    return codemap.closer(_BRACKETS[text[i]], text, i, _NATIVE.pairs)


def enclosing(functions: FunctionList, offset: int) -> DeviceFunction | None:
    """The function whose body holds `offset`, or None (`FunctionList.holding`)."""
    k = functions.holding(offset)
    return functions[k] if k >= 0 else None
