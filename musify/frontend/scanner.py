"""A context-aware scanner for C, C++ and CUDA text.

It labels every identifier the rules might care about with the context it sits in (code, comment,
string or character literal, `#include` path, preprocessor condition, macro body), so the engine
never rewrites a comment or a string by accident, and it records where comments and literals are,
so structural passes (launch detection, hazards) can ask "is this offset code?".

Speed matters: this is the hot path. One compiled regex skips, in C, everything that cannot be a
candidate (ordinary identifiers, numbers, punctuation); Python only sees comments, literals,
directives and identifiers that start like a vendor name. The candidate prefixes come from the
rule set (see `candidate_prefixes`), so the scanner itself knows no CUDA name.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from enum import IntEnum
from functools import lru_cache


class Ctx(IntEnum):
    CODE = 0
    COMMENT = 1
    STRING = 2
    CHAR = 3
    INCLUDE = 4
    DIRECTIVE = 5  # #if/#ifdef/#elif/#undef/#pragma operands
    MACRO = 6  # the replacement text of a #define
    MACRO_NAME = 7  # the name a #define defines


@dataclass(frozen=True, slots=True)
class Ident:
    start: int
    end: int
    name: str
    ctx: Ctx


@dataclass(frozen=True, slots=True)
class Include:
    start: int  # offset of the path (inside the delimiters)
    end: int
    path: str
    angled: bool
    directive_start: int


@dataclass(frozen=True, slots=True)
class Directive:
    start: int  # offset of '#'
    end: int  # offset of the newline that ends the logical line (or len(text))
    keyword: str  # include, define, if, ifdef, ...
    name: str = ""  # for define/undef/ifdef/ifndef: the macro name


@dataclass(frozen=True, slots=True)
class Problem:
    """A lexical problem: unterminated comment or literal."""

    offset: int
    what: str  # "comment", "string literal", "character literal", "raw string literal"


@dataclass
class Scan:
    idents: list[Ident] = field(default_factory=list)
    includes: list[Include] = field(default_factory=list)
    directives: list[Directive] = field(default_factory=list)
    # (start, end, ctx) of every comment and literal, in order; the complement is code
    spans: list[tuple[int, int, Ctx]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def code_map(self) -> CodeMap:
        return CodeMap(self.spans)


class CodeMap:
    """Answers "is this offset in code?" by bisecting the comment and literal spans."""

    def __init__(self, spans: list[tuple[int, int, Ctx]]):
        self._starts = [s for s, _, _ in spans]
        self._spans = spans

    def context_at(self, pos: int) -> Ctx:
        i = bisect.bisect_right(self._starts, pos) - 1
        if i >= 0:
            s, e, ctx = self._spans[i]
            if s <= pos < e:
                return ctx
        return Ctx.CODE

    def is_code(self, pos: int) -> bool:
        return self.context_at(pos) == Ctx.CODE

    def spans(self) -> list[tuple[int, int, Ctx]]:
        return self._spans


# Vendor-looking identifiers are always candidates, rule or no rule: the unknown-name pass needs them.
VENDOR_PREFIXES = ("cu", "CU", "__cu", "__CU", "nv", "NV", "__nv", "__NV", "nccl", "NCCL", "npp", "NPP")

# Alternatives start with a literal character where possible: Python's regex engine is several
# times faster without optional prefixes or look-behinds, so those checks are done in Python on
# the (few) matches instead.
_LEX = r"""
  (?P<lc>//[^\n]*)
| (?P<bc>/\*)
| (?P<raw>R"(?P<delim>[^()\\\s"]{0,16})\()
| (?P<str>")
| (?P<chr>')
| (?P<pp>\#)
| (?P<id>(?:%s)\w*)
"""
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_CHAR_PREFIXES = ("u8", "u", "U", "L")
_KEYWORD = re.compile(r"[ \t]*([A-Za-z_]\w*)?")
_STR_BODY = re.compile(r'(?:[^"\\\n]|\\(?:\r?\n|.))*(")?')
_CHR_BODY = re.compile(r"(?:[^'\\\n]|\\(?:\r?\n|.))*(')?")
_INCLUDE_PATH = re.compile(r'[ \t]*(?:<([^>\n]*)>|"([^"\n]*)")')
_DEFINE_NAME = re.compile(r"[ \t]*([A-Za-z_]\w*)")
_IDENT = re.compile(r"[A-Za-z_]\w*")

_DIRECTIVE_CTX = {"define": Ctx.MACRO, "include": Ctx.INCLUDE, "include_next": Ctx.INCLUDE, "import": Ctx.INCLUDE}
_MESSAGE_DIRECTIVES = frozenset({"error", "warning"})


@lru_cache(maxsize=8)
def _compile(prefixes: tuple[str, ...]) -> re.Pattern[str]:
    alts = "|".join(re.escape(p) for p in sorted(set(prefixes), key=lambda p: (-len(p), p)))
    return re.compile(_LEX % alts, re.MULTILINE | re.VERBOSE)


def candidate_prefixes(names: list[str] | set[str], width: int = 3) -> tuple[str, ...]:
    """The prefixes the scanner stops at: the vendor prefixes plus the first `width` chars of each name."""
    out = set(VENDOR_PREFIXES)
    for name in names:
        out.add(name[:width])
    return tuple(sorted(out))


def _is_literal_prefix(text: str, quote: int) -> bool:
    """True when the word before a quote is exactly an encoding prefix (u8'x', L'x')."""
    for p in _CHAR_PREFIXES:
        s = quote - len(p)
        if s >= 0 and text.startswith(p, s) and (s == 0 or text[s - 1] not in _WORD_CHARS):
            return True
    return False


def _logical_line_end(text: str, pos: int) -> int:
    """Offset of the newline ending the logical line that contains `pos` (backslash continues)."""
    n = len(text)
    while True:
        nl = text.find("\n", pos)
        if nl < 0:
            return n
        j = nl - 1
        if j >= 0 and text[j] == "\r":
            j -= 1
        if j >= 0 and text[j] == "\\":
            pos = nl + 1
            continue
        return nl


def scan(text: str, prefixes: tuple[str, ...] = VENDOR_PREFIXES) -> Scan:
    """Scan `text`; identifiers starting with one of `prefixes` are reported with their context."""
    lex = _compile(prefixes)
    out = Scan()
    idents = out.idents
    spans = out.spans
    n = len(text)
    pos = 0
    directive_end = -1  # while pos < directive_end we are inside a directive
    directive_ctx = Ctx.CODE
    search = lex.search
    while True:
        m = search(text, pos)
        if m is None:
            break
        kind = m.lastgroup
        start = m.start()
        if kind == "id":
            end = m.end()
            if start and text[start - 1] in _WORD_CHARS:  # inside a longer word: not a candidate
                pos = end
                continue
            ctx = directive_ctx if start < directive_end else Ctx.CODE
            idents.append(Ident(start, end, m.group(), ctx))
            pos = end
        elif kind == "lc":
            end = m.end()
            while text[end - 1:end] == "\\" or text[end - 2:end] == "\\\r":  # continued comment
                nl = text.find("\n", end + 1)
                end = n if nl < 0 else nl
            spans.append((start, end, Ctx.COMMENT))
            pos = end
        elif kind == "bc":
            close = text.find("*/", start + 2)
            if close < 0:
                out.problems.append(Problem(start, "comment"))
                end = n
            else:
                end = close + 2
            spans.append((start, end, Ctx.COMMENT))
            pos = end
        elif kind == "str":
            b = _STR_BODY.match(text, m.end())
            end = b.end()
            if b.group(1) is None:
                out.problems.append(Problem(start, "string literal"))
            spans.append((start, end, Ctx.STRING))
            pos = end
        elif kind == "chr":
            if start and text[start - 1] in _WORD_CHARS and not _is_literal_prefix(text, start):
                pos = start + 1  # a digit separator (1'000'000) rather than a character literal
                continue
            b = _CHR_BODY.match(text, m.end())
            end = b.end()
            if b.group(1) is None:
                out.problems.append(Problem(start, "character literal"))
            spans.append((start, end, Ctx.CHAR))
            pos = end
        elif kind == "raw":
            closer = ")" + m.group("delim") + '"'
            close = text.find(closer, m.end())
            if close < 0:
                out.problems.append(Problem(start, "raw string literal"))
                end = n
            else:
                end = close + len(closer)
            spans.append((start, end, Ctx.STRING))
            pos = end
        else:  # '#': a directive starts when only blanks precede it on its line
            line_start = text.rfind("\n", 0, start) + 1
            if start < directive_end or text[line_start:start].strip(" \t\ufeff"):
                pos = start + 1  # stringizing, token pasting, or a stray '#'
                continue
            k = _KEYWORD.match(text, start + 1)
            keyword = k.group(1) or ""
            end = _logical_line_end(text, start)
            pos = k.end()
            name = ""
            if keyword in ("include", "include_next", "import"):
                p = _INCLUDE_PATH.match(text, pos)
                if p:
                    g = 1 if p.group(1) is not None else 2
                    out.includes.append(Include(p.start(g), p.end(g), p.group(g), g == 1, start))
                    spans.append((p.start(g), p.end(g), Ctx.INCLUDE))
                    pos = p.end()
            elif keyword in ("define", "undef", "ifdef", "ifndef"):
                d = _DEFINE_NAME.match(text, pos)
                if d:
                    name = d.group(1)
                    if keyword == "define":
                        # the defined name is labelled separately: a pass must not rename a
                        # user's own macro definition by accident, but it may rename a vendor one
                        if any(name.startswith(p) for p in prefixes):
                            idents.append(Ident(d.start(1), d.end(1), name, Ctx.MACRO_NAME))
                        pos = d.end(1)
            elif keyword in _MESSAGE_DIRECTIVES:
                spans.append((pos, end, Ctx.STRING))
                pos = end
            out.directives.append(Directive(start, end, keyword, name))
            directive_end = end
            directive_ctx = _DIRECTIVE_CTX.get(keyword, Ctx.DIRECTIVE)
    return out


def identifiers_in(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """Every identifier in text[start:end] (for rewriting inside comments and strings on request)."""
    return [(m.start(), m.end(), m.group()) for m in _IDENT.finditer(text, start, end)]


class LineIndex:
    """Offset -> (line, column), both 1-based; columns count characters."""

    def __init__(self, text: str):
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self._starts, offset) - 1
        return i + 1, offset - self._starts[i] + 1

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)

    @property
    def line_count(self) -> int:
        return len(self._starts)
