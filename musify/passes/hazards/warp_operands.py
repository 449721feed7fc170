"""Where a number or a name stands in a device function's text, read without a parse.

The warp-size pass parses a function only when `warp_precheck.may_report` says one of its checks
could fire. The substring tests there let through every function that merely holds a 32 and a
thread index: an array of 32 partial sums, a tile size, a `32` in a comment. On vLLM and
flash-attn four functions in five parsed for MU2021 and MU2024 reported nothing, and their
parse (tree-sitter reads about 5 MB/s) was most of the pass. These tests read what stands on
either side of a number or a name instead, and answer "maybe" wherever the text is not plain:

- a checked number is a bare operand (MU2021, MU2024: right of `& % >> /` or a comparison;
  MU2025: either side of a comparison), as `int_value` reads the operand's whole text;
- a lane mask kept in a variable is read as bits (MU2041): any use but as a whole argument of a
  call, which is how warp-agnostic code passes `__activemask()` on.

Each answers False only where the tree, on code that compiles, holds no such node: a comment
or a directive between a number and what precedes it, anything but an operator or one of the
punctuators `_NOT_AN_OPERATOR` before it, or a use that is not plainly an argument, all say
"maybe". tests/test_warp_size_precheck.py holds the pass with and without them to the same
diagnostics on generated functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache, partial

from musify.passes.hazards.warp_tree import call_pattern, literal_tokens

InCode = Callable[[int], bool] | None  # whether an offset of the snippet is code (no comment or literal)

# the right operand's value each operator is checked with (MU2021's lane arithmetic, MU2024's
# first-warp tests): `warp_size._check_binary`
LANE_OPERANDS = {"&": 31, "%": 32, ">>": 5, "/": 32, "<": 32, "<=": 31, ">=": 32, ">": 31}
_COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">="})
# 31, 32 and 5 as `int_value` reads a whole operand: decimal with leading zeros or hex, u/l suffixes
_WANTED = frozenset({31, 32, 5})
_OPERATOR_CHARS = frozenset("<>=!&|%/^+*-~")
# a number just after one of these is no binary operator's operand: a subscript, an array's size,
# an argument, an initialiser, a case
_NOT_AN_OPERATOR = frozenset("[(,{;?:")
# words a '(' follows that do not call: what stands in their parentheses is no argument
_NOT_CALLS = frozenset({
    "if", "while", "switch", "for", "return", "sizeof", "alignof", "alignas", "decltype", "noexcept",
    "static_assert", "catch", "throw", "case", "co_return", "co_await", "co_yield", "typeid", "new",
    "delete", "defined", "operator", "__attribute__", "__declspec", "asm", "__asm__",
    "volatile", "__volatile__", "else", "do",
})
_UNSURE = None


def code_test(code, start: int = 0) -> Callable[[int], bool]:
    """The `InCode` test of the snippet starting at offset `start` of a text whose comments and
    literals `code` (its scan's `CodeMap`) knows."""
    return partial(_is_code, code, start)


def _is_code(code, start: int, at: int) -> bool:
    return code.span_end(start + at) is None


def lane_operand(snippet: str, in_code: InCode = None) -> bool:
    """Some 31, 32 or 5 in code may be the right operand of an operator MU2021 or MU2024 checks
    it with (`LANE_OPERANDS`), or a 32 may start the operand `32 - 1` (`& (32 - 1)`: 31 to the
    checks, `warp_tree.operand_value`; any 32 a minus follows is a maybe)."""
    for at, end, value in _literals(snippet, in_code):
        before = _before(snippet, at)
        if before is _UNSURE:
            return True
        if value == 32:
            after = _after(snippet, end)
            if after is _UNSURE or after[0][:1] == "-":
                return True
        run, prev = before
        if run:
            if LANE_OPERANDS.get(run) == value:
                return True
        elif prev and prev not in _NOT_AN_OPERATOR:
            return True
    return False


def compared_32(snippet: str, in_code: InCode = None) -> bool:
    """Some 32 in code may be an operand of a comparison (MU2025: the warp size compared with 32)."""
    for at, end, value in _literals(snippet, in_code):
        if value != 32:
            continue
        before, after = _before(snippet, at), _after(snippet, end)
        if before is _UNSURE or after is _UNSURE:
            return True
        run, prev = before
        if run in _COMPARISONS or (not run and prev and prev not in _NOT_AN_OPERATOR):
            return True  # the right operand
        follows = after[0]
        if follows[:2] in ("==", "!=", "<=", ">=") or (follows[:1] in ("<", ">") and follows[:2] not in ("<<", ">>")):
            return True  # the left operand
    return False


def bits_read(snippet: str, results: frozenset[str], in_code: InCode = None) -> bool:
    """A variable whose declaration takes the value of a call to one of `results` (the lane-mask
    results) may be read as bits: used other than as a whole argument of a call (the uses
    `warp_size._used_as_bits` passes over). Where the declaration cannot be read plainly, yes."""
    for at, _ in name_uses(snippet, results, in_code):
        declared = _declared_from(snippet, at, in_code)
        if declared is _UNSURE:
            return True
        if any(_read_as_bits(snippet, var, start, in_code) for var, start in declared):
            return True
    return False


def name_uses(text: str, names: frozenset[str], in_code: InCode) -> list[tuple[int, str]]:
    """(offset, name) of each whole-word occurrence of `names` in code (everywhere without
    `in_code`), in order: `warp_tree.call_pattern`'s search, the word's start and a `$` after it
    checked by hand."""
    out = []
    for m in _name_search(names).finditer(text):
        at, end = m.span()
        if (at and (text[at - 1].isalnum() or text[at - 1] in "_$")) or text[end:end + 1] == "$":
            continue
        if in_code is None or in_code(at):
            out.append((at, m.group()))
    return out


@lru_cache(maxsize=8)
def _name_search(names: frozenset[str]) -> re.Pattern[str]:
    """`call_pattern(names)`, or where a name is no plain identifier every occurrence of each."""
    return call_pattern(names) or re.compile("|".join(sorted(map(re.escape, names), key=len, reverse=True)))


@lru_cache(maxsize=1)
def _literals(snippet: str, in_code: InCode) -> tuple[tuple[int, int, int], ...]:
    """(start, end, value) of each 31, 32 or 5 in code (in comments and literals too where
    `in_code` is not given), made once for the two tests that ask (`in_code` is one object per
    function): `warp_tree.literal_tokens`, compiled on ASCII text (a regex over a 50 KB body of
    composable_kernel's took a third of a millisecond)."""
    return tuple(token for token in literal_tokens(snippet, 0, len(snippet), _WANTED)
                 if in_code is None or in_code(token[0]))


def _before(text: str, at: int) -> tuple[str, str] | None:
    """(the operator characters just before offset `at`, past spaces and line continuations; the
    character before them), or `_UNSURE` where a comment or a directive may stand between."""
    i = at
    while i > 0 and (text[i - 1].isspace() or text[i - 1] == "\\"):
        i -= 1
        if text[i] == "\n":
            line = text[text.rfind("\n", 0, i) + 1:i]
            if "//" in line or line.lstrip().startswith("#"):
                return _UNSURE
    j = i
    while j > 0 and text[j - 1] in _OPERATOR_CHARS:
        j -= 1
    run = text[j:i]
    if run.endswith("*/"):
        return _UNSURE
    return run, text[j - 1] if j > 0 else ""


def _after(text: str, end: int) -> tuple[str, str] | None:
    """(the operator characters just after offset `end`, past spaces and line continuations; the
    character after them), or `_UNSURE` where a comment or a directive follows."""
    i, n = end, len(text)
    while i < n and (text[i].isspace() or text[i] == "\\"):
        i += 1
    if text.startswith(("//", "/*", "#"), i):
        return _UNSURE
    j = i
    while j < n and text[j] in _OPERATOR_CHARS:
        j += 1
    return text[i:j], text[j:j + 1]


def _declared_from(text: str, at: int, in_code: InCode) -> list[tuple[str, int]] | None:
    """The variables (name, offset) that an `=` before offset `at` in the same statement gives a
    value to: any of them may take the value of the call at `at` (none: nothing keeps it, it is
    counted, compared or passed on where it stands; a compound assignment keeps a value computed
    with it, in a variable whose declaration took another). `_UNSURE` where a declaration may
    take it other than by `=` (`T m(call())`, `T m{call()}`), a `}` or a lambda's body may hold
    it inside the statement, or a declarator is no plain name."""
    found = []
    for i, c in _back(text, at, ";{}=", in_code):
        if c == "=":
            if text[i + 1:i + 2] == "=" or (i > 0 and text[i - 1] in _OPERATOR_CHARS):
                continue  # a comparison or a compound assignment
            j = _space_before(text, i)
            k = _name_start(text, j)
            if k == j or text[k].isdigit():
                return _UNSURE  # an array, a member, a dereference: no plain name
            found.append((text[k:j], k))
            continue
        if c == "{":
            brace = _brace_kind(text, i, in_code)
            if brace == "expression":  # `= {call()}`, `f({call()})`: the statement goes on
                continue
            if brace != "block":
                return _UNSURE
        elif c == "}":
            return _UNSURE
        if not found and _may_declare(text, at):
            return _UNSURE
        return found
    return _UNSURE


def _back(text: str, at: int, chars: str, in_code: InCode):
    """(offset, character) of each of `chars` in code before offset `at`, nearest first: one
    `rfind` a character found (the search runs in C, not a Python step per character)."""
    last = {c: text.rfind(c, 0, at) for c in chars}
    while True:
        c = max(last, key=last.__getitem__)
        i = last[c]
        if i < 0:
            return
        last[c] = text.rfind(c, 0, i)
        if in_code is None or in_code(i):
            yield i, c


# words a block's '{' follows; a keyword no declaration's name follows
_BLOCK_WORDS = frozenset({"else", "do", "try"})
_NOT_TYPES = frozenset({"return", "case", "else", "do", "new", "delete", "throw", "co_return", "co_yield",
                        "co_await", "goto", "sizeof", "typedef", "using"})


def _brace_kind(text: str, at: int, in_code: InCode) -> str:
    """What the '{' at `at` opens, read from what precedes it: "block" (a statement's or a
    function's body), "expression" (an initialiser list after `=`, `,`, `(` or `return`), or
    "unsure" (a lambda's body, `T m{...}`, anything else)."""
    i = _space_before(text, at)
    before = text[i - 1] if i > 0 else ""
    if before in ("", ";", "{", "}"):
        return "block"
    if before in "=,(":
        return "expression"
    if before == ")":  # if/for/while/switch/catch or a function: a lambda's `](...)` is no block
        opener = _opening(text, i - 1, in_code)
        if opener < 0:
            return "unsure"
        j = _space_before(text, opener)
        return "unsure" if j > 0 and text[j - 1] == "]" else "block"
    word = text[_name_start(text, i):i]
    if word in _BLOCK_WORDS:
        return "block"
    return "expression" if word == "return" else "unsure"


def _may_declare(text: str, at: int) -> bool:
    """The '(' or '{' just before offset `at` may open a declaration's initialiser: `T m(...)`,
    `T* m{...}` (a name there, and a type name, `*`, `&` or `>` before it), not a call's
    arguments (`f(...)` after an operator, a '(' or a statement's start) or a keyword's."""
    named = _called(text, at)
    if named is None:
        return False
    j = _space_before(text, named[1])
    if j == 0:
        return False
    if text[j - 1] in "*&>":
        return True
    word = text[_name_start(text, j):j]
    return bool(word) and not word[0].isdigit() and word not in _NOT_TYPES


def _opening(text: str, at: int, in_code: InCode) -> int:
    """The offset of the '(' the ')' at `at` closes (in code), or -1."""
    depth = 0
    for i, c in _back(text, at + 1, "()", in_code):
        depth += 1 if c == ")" else -1
        if depth == 0:
            return i
    return -1


def _space_before(text: str, at: int) -> int:
    """`at` moved back past the spaces before it."""
    while at > 0 and text[at - 1].isspace():
        at -= 1
    return at


def _name_start(text: str, end: int) -> int:
    """Where the name (letters, digits, '_', '$') ending at `end` starts (`end`: none)."""
    while end > 0 and (text[end - 1].isalnum() or text[end - 1] in "_$"):
        end -= 1
    return end


def _called(text: str, at: int) -> tuple[str, int] | None:
    """The name before the '(' or '{' just before offset `at`, and where it starts (None: no such
    bracket, no name before it, or a keyword's)."""
    i = _space_before(text, at)
    if i == 0 or text[i - 1] not in "({":
        return None
    i = _space_before(text, i - 1)
    k = _name_start(text, i)
    word = text[k:i]
    return (word, k) if word and not word[0].isdigit() and word not in _NOT_CALLS else None


def _read_as_bits(text: str, name: str, declared_at: int, in_code: InCode) -> bool:
    """Some use of `name` but its declaration at `declared_at` may be other than a whole argument."""
    for at, _ in name_uses(text, frozenset((name,)), in_code):
        if at != declared_at and not _whole_argument(text, at, at + len(name), in_code):
            return True
    return False


def _whole_argument(text: str, start: int, end: int, in_code: InCode) -> bool:
    """text[start:end] is plainly a whole argument of a call: `f(x)`, `f(a, x)`, `f(x, b)`."""
    before, after = _before(text, start), _after(text, end)
    if before is _UNSURE or after is _UNSURE or before[0] or after[0] or after[1] not in (",", ")"):
        return False
    prev = before[1]
    if prev == "(":
        return _called(text, start) is not None
    if prev == "," and in_code is not None:
        opener = _enclosing(text, start, in_code)
        return opener >= 0 and text[opener] == "(" and _called(text, opener + 1) is not None
    return False


def _enclosing(text: str, at: int, in_code: Callable[[int], bool]) -> int:
    """The offset of the bracket (in code) left open before offset `at`, or -1."""
    depth = 0
    for i, c in _back(text, at, "()[]{}", in_code):
        if c in ")]}":
            depth += 1
        elif depth == 0:
            return i
        else:
            depth -= 1
    return -1


def index_part(value: str) -> str:
    """The part of a declaration's value an index is computed from: without what a subscript
    selects (`data[tid]` is a value loaded, not a thread's number) and without a shift's amount
    (`bits >> (4 * tid)` picks bits of `bits`). llama.cpp's `qh = get_int_b2(bxi->qh, 0) >> (4 *
    kqsx)` took `kqsx`, a thread's column, into a word of quantized bits, and `qh >> 5` was called
    warp arithmetic (MU2021). A value without '[', '<<' or '>>' (most) is returned as it is."""
    if "[" not in value and "<<" not in value and ">>" not in value:
        return value
    out: list[str] = []
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if c == "[":
            i = _closing(value, i, "[", "]")
            out.append("[]")
            continue
        if value.startswith(("<<", ">>"), i) and not value.startswith(("<<=", ">>="), i):
            out.append(value[i:i + 2])
            i += 2
            while i < n and value[i] in " \t\n":
                i += 1
            if i < n and value[i] == "(":
                i = _closing(value, i, "(", ")")
            else:
                while i < n and (value[i].isalnum() or value[i] in "_."):
                    i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _closing(text: str, i: int, opener: str, closer: str) -> int:
    """The offset after the `closer` that pairs with the `opener` at `i` (the end of `text` where
    none does)."""
    depth = 0
    for k in range(i, len(text)):
        if text[k] == opener:
            depth += 1
        elif text[k] == closer:
            depth -= 1
            if depth == 0:
                return k + 1
    return len(text)
