"""Unrecognised vendor-looking names (MU1001): whether a use of a name no rule knows declares it,
reads a member, or uses it, from the tokens around it.

Moved out of `identifiers.py`, which calls `_unknown` for each use its rename loop leaves and
re-exports these names. `unknown_use` and `previous_token` are the compiled `_cscan` functions where
they are built; the `_python` functions here are their references (tests/test_cscan_equivalence.py).
"""

from __future__ import annotations

import re

from musify.frontend.launches import match_angle_back
from musify.frontend.scanner import Ctx, native
from musify.frontend.skipped import inside
from musify.passes._base import PassContext
from musify.passes.hazards.file_facts import directive_at
from musify.passes.macro_pastes import call_argument
from musify.patterns import lazy_pattern

_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# identifiers before a name that mean the name is being used, not declared
_USE_KEYWORDS = frozenset({
    "return", "else", "case", "goto", "throw", "new", "delete", "sizeof", "alignof", "co_return",
    "co_yield", "co_await", "typeid", "decltype", "and", "or", "not", "if", "while", "do", "defined",
})


def _unknown(ctx: PassContext, start: int, name: str, where: Ctx, position) -> None:
    """Record a vendor-looking name no rule knows, unless this file declares it. The tokens
    before it decide most cases (`unknown_use`, compiled); after `>`, `{` or `,` the template
    and enumerator checks below do. (`renames` decides most uses of names the run already
    knows to be unrecognised the same way, before this is called.)"""
    if where == Ctx.MACRO_NAME:
        ctx.declared.add(name)
        return
    if where == Ctx.MACRO and _macro_parameter(ctx, start, name):
        return  # `#define Return_Status(cudaError_t_status) ...` (CUTLASS): the macro's own parameter
    argument = call_argument(ctx.text, start, start + len(name))  # (callee, position), or None
    if where == Ctx.DIRECTIVE and macro_argument(ctx, start, argument):
        return
    use = unknown_use(ctx.text, start)
    if use == UNDECIDED:
        before = previous_token(ctx.text, start)
        if _declares(ctx.text, before) or (before[0] in ("{", ",") and _enumerator(ctx, start, start + len(name))):
            use = DECLARED
        else:
            use = MEMBER if before[0] in (".", "->") else USE
    if use == USE and _in_nested_namespace_head(ctx.text, start):
        use = DECLARED  # `namespace at::native::cuda_utils {`: a C++17 nested namespace definition
    if use == DECLARED:
        ctx.declared.add(name)
    elif use == USE:  # (a member access is neither)
        line, col = position(start)
        ctx.found.pending_unknown.append((name, line, col))
        if argument is not None:  # (a macro of the run may paste it: `finalise` asks)
            ctx.found.unknown_args.append((line, col, *argument))


_PARAMETERS = lazy_pattern(globals(), "_PARAMETERS", r"#[ \t]*define[ \t]+\w+\(([^)]*)\)")
_NAME = lazy_pattern(globals(), "_NAME", r"[A-Za-z_]\w*")


def _macro_parameter(ctx: PassContext, start: int, name: str) -> bool:
    """Whether `name` at `start` is a parameter of the function-like macro whose `#define` holds
    it: a name the macro declares for its own body, not one the project uses (a parameter no
    other line defines was reported MU1001 at each use)."""
    directive = directive_at(ctx, start)
    if directive is None or directive.keyword != "define":
        return False
    m = _PARAMETERS.match(ctx.text, directive.start, directive.end)
    return m is not None and name in _NAME.findall(m.group(1))


def macro_argument(ctx: PassContext, start: int, argument: tuple[str, int] | None) -> bool:
    """Whether the name at `start`, a call's whole `argument` (`macro_pastes.call_argument`), is
    an argument of a function-like macro called in an `#if` or `#elif` (`#if !_CCCL_COMPILER(NVRTC)`,
    `_CCCL_CUDA_COMPILER(NVCC, >=, 12)`; not `defined(...)`). The macro may paste it into another
    name (CCCL's `_CCCL_COMPILER_##__VA_ARGS__`) or compare it; it names nothing of its own, so it
    is no unrecognised name (the CUDA 13 headers' CCCL reported `NVRTC` 125 times, CuPy's copy 207)."""
    if argument is None or argument[0] == "defined":
        return False
    directive = directive_at(ctx, start)
    return directive is not None and directive.keyword in ("if", "elif")


DECLARED, MEMBER, USE, UNDECIDED = range(4)  # what `unknown_use` makes of an unknown name
# the head of a nested namespace definition, up to the name being declared (`namespace a::inline b::`)
_BLANK = r"(?:\s|\\\r?\n)"  # a blank, or a line continuation
_NESTED_NAMESPACE = re.compile(rf"\bnamespace{_BLANK}+(?:(?:inline{_BLANK}+)?[A-Za-z_]\w*{_BLANK}*::{_BLANK}*)+\Z")


def _in_nested_namespace_head(text: str, start: int) -> bool:
    """Does the name at `start` follow `namespace a::b::` (within 256 characters)? The word is
    looked for first: the regex tries every start in the window (6 us a use, most of the pass on
    code that calls an unknown `CUDA_CHECK` on every line), and without the word it cannot match."""
    # each "namespace" in the window (`_namespace_near`'s search), the regex matched there, as
    # `_next_enum_open` does: its `\b` keeps its own search from skipping ahead to the word
    at = text.find("namespace", max(0, start - 256), start)
    while at >= 0:
        if _NESTED_NAMESPACE.match(text, at, start) is not None:
            return True
        at = text.find("namespace", at + 1, start)
    return False


def _opens_a_list_item(text: str, start: int, end: int) -> bool:
    """Whether the name at start..end follows `{` or `,` and is followed (past blanks) by
    something other than `=`, `,` or `}`: no enumerator then (`_enumerator` says no before looking
    for enum bodies), and `_unknown` reports it as a use (`do { CUDA_CHECK(...)`)."""
    if previous_token_python(text, start)[0] not in ("{", ","):
        return False
    j = end
    while j < len(text) and text[j] in " \t\r\n":
        j += 1
    return j < len(text) and text[j] not in "=,}"


def _namespace_near(text: str, start: int) -> bool:
    """Whether the word `namespace` lies within the 256 characters before `start` (`_cscan`'s
    `namespace_near`)."""
    return text.find("namespace", max(0, start - 256), start) >= 0


def unknown_use_python(text: str, start: int) -> int:
    """What the tokens before the name at `start` say it is: DECLARED here (after a type word,
    `~`, or `*`/`&` after a type word), a MEMBER (after `.` or `->`), a USE to report, or
    UNDECIDED (after `>`, which may close template arguments, or `{`/`,`, which may open an
    enumerator): `_unknown`'s checks that need no more than two tokens. `_cscan.unknown_use`
    is this in C (tests/test_cscan_equivalence.py)."""
    tok, at = previous_token_python(text, start)
    if tok in ("*", "&"):
        before = previous_token_python(text, at)[0]
        if before == ">":
            return UNDECIDED
        declares = _type_word(before)
    elif tok == ">":
        return UNDECIDED
    else:
        declares = _type_word(tok) or tok == "~"
    if declares:
        return DECLARED
    if tok in ("{", ","):
        return UNDECIDED
    return MEMBER if tok in (".", "->") else USE


def is_declaration(text: str, start: int) -> bool:
    """A lexical guess that the name at `start` is being declared (`void cudaCheck(`, `int cuX;`).

    The token before a declared name is a type name, a declaration keyword, or `*`/`&` after one;
    before a used name it is an operator, a bracket, a separator or a keyword like `return`.
    """
    return _declares(text, previous_token(text, start))


def _declares(text: str, before: tuple[str, int]) -> bool:
    """`is_declaration`, given the token before the name and where it starts."""
    tok, tok_start = before
    if tok in ("*", "&"):
        tok, tok_start = previous_token(text, tok_start)
        if tok == ">":
            return _closes_template_arguments(text, tok_start)
        return _type_word(tok)
    if tok == ">":  # `std::vector<cudaStream_t> cudaStreams`, a parameter or a member
        return _closes_template_arguments(text, tok_start)
    return _type_word(tok) or tok == "~"  # a type's name (or a declaration keyword), or a destructor


def _type_word(tok: str) -> bool:
    """Can `tok`, just before a name, be the type (or keyword) that declares it?"""
    return bool(tok) and tok[0] in _WORD and not tok[0].isdigit() and tok not in _USE_KEYWORDS


_NOT_IN_A_TYPE = lazy_pattern(globals(), "_NOT_IN_A_TYPE", r"&&|\|\||[?!]|==")  # logical operators: a comparison, not template arguments


def _closes_template_arguments(text: str, close: int) -> bool:
    """Does the `>` at `close` end a type's template arguments (`map<K, V>`), not a comparison or
    a shift? It does when its `<` is found back in the same statement, with no logical operator
    between, after a type's name. (`f(a < b, c > cudaX)` reads as a declaration: such code is rare,
    and the cost is one MU1001 not raised.)"""
    lt = match_angle_back(text, close)
    if lt < 0 or (lt > 0 and text[lt - 1] == "<") or _NOT_IN_A_TYPE.search(text, lt, close):
        return False  # no `<`, a shift, or a logical expression
    return _type_word(previous_token(text, lt)[0])


_ENUM_OPEN = re.compile(r"\benum\b[^;{}()]*\{")
_BRACES = re.compile(r"[{}]")
_ENUM_BODIES = "identifiers.enum_bodies"


def _enumerator(ctx: PassContext, start: int, end: int) -> bool:
    """Is the name at start..end an enumerator being declared (`enum class Backend { CPU, CUDA_X = 2 }`)?
    It is when a `=`, `,` or `}` follows it and it lies in the braces of an `enum` (found once per
    file: CUPTI's headers hold enums of a thousand CUDA-named enumerators)."""
    text = ctx.text
    j = end
    while j < len(text) and text[j] in " \t\r\n":
        j += 1
    if j < len(text) and text[j] not in "=,}":
        return False
    bodies = ctx.scratch.get(_ENUM_BODIES)
    if bodies is None:
        bodies = ctx.scratch[_ENUM_BODIES] = _enum_bodies(ctx)
    return inside(bodies, start)


def _enum_bodies(ctx: PassContext) -> list[tuple[int, int]]:
    """(offset of `{`, offset of `}`) of each enum's list of enumerators in code, in order."""
    text = ctx.text
    codemap = ctx.scan.code_map()
    out = []
    m = _next_enum_open(text, 0)
    while m is not None:
        if codemap.is_code(m.start()) and codemap.is_code(m.end() - 1):
            close = codemap.closing(_BRACES, text, m.end() - 1)
            out.append((m.end() - 1, close if close >= 0 else len(text)))
        # the word in a comment ("this enum lists...") must not swallow the real `enum X {` after it
        m = _next_enum_open(text, m.start() + 4)
    return out


def _next_enum_open(text: str, pos: int) -> re.Match[str] | None:
    """`_ENUM_OPEN.search(text, pos)`: its match at each "enum" from `pos` (every match starts
    there). The regex begins with `\b`, which keeps sre from skipping ahead to its literal: the
    search tried a match at every character of the file (a tenth of the identifier pass)."""
    at = text.find("enum", pos)
    while at >= 0:
        m = _ENUM_OPEN.match(text, at)
        if m is not None:
            return m
        at = text.find("enum", at + 1)
    return None


def previous_token_python(text: str, start: int) -> tuple[str, int]:
    """The token that ends before `start` (skipping blanks) and where it starts; ("", 0) at the top.
    (`previous_token` is `_cscan.previous_token` where the compiled module is built.)"""
    j = start - 1
    while j >= 0 and text[j] in " \t\r\n\\":
        j -= 1
    if j < 0:
        return "", 0
    if text[j] in _WORD:
        k = j
        while k > 0 and text[k - 1] in _WORD:
            k -= 1
        return text[k:j + 1], k
    if j >= 1 and text[j - 1:j + 1] in ("::", "->"):
        return text[j - 1:j + 1], j - 1
    return text[j], j


previous_token = native().previous_token if native() is not None else previous_token_python
unknown_use = native().unknown_use if native() is not None else unknown_use_python
