"""A context-aware scanner for C, C++ and CUDA text.

It labels every identifier the rules might care about with the context it sits in (code, comment,
string or character literal, `#include` path, preprocessor condition, macro body), so the engine
never rewrites a comment or a string by accident, and it records where comments and literals are,
so structural passes (launch detection, hazards) can ask "is this offset code?".

Speed matters: this is the hot path. `_cscan.c` does the same two passes in C (built at install
time as an optional extension); this module's Python code is the reference it is tested against
(tests/test_cscan_equivalence.py) and the fallback where no compiler was available, or when
MUSIFY_PURE_PYTHON=1 asks for it. In the Python path one compiled regex skips everything that
cannot be a candidate (ordinary identifiers, numbers, punctuation); Python only sees comments,
literals, directives and identifiers that start like a vendor name. The candidate prefixes come
from the rule set (see `candidate_prefixes`), so the scanner itself knows no CUDA name.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import field
from functools import lru_cache
from typing import Any

from musify.classes import dataclass, named_tuple
from musify.frontend import compiled
from musify.frontend.codemap import CodeMap
from musify.frontend.idents import Ctx, Ident, IdentList
from musify.frontend.lines import LineIndex, line_starts_python  # noqa: F401 -- re-exported (moved to lines.py)
from musify.patterns import lazy_pattern


@named_tuple
class Include:
    start: int  # offset of the path (inside the delimiters)
    end: int
    path: str
    angled: bool
    directive_start: int


@named_tuple
class Directive:
    start: int  # offset of '#'
    end: int  # offset of the newline that ends the logical line (or len(text))
    keyword: str  # include, define, if, ifdef, ...
    name: str = ""  # for define/undef/ifdef/ifndef: the macro name


_FRESH: Any = object()  # a container argument not given: `Scan` makes a new one


@dataclass(frozen=True, slots=True)
class Problem:
    """A lexical problem: unterminated comment or literal."""

    offset: int
    what: str  # "comment", "string literal", "character literal", "raw string literal"


@dataclass(init=False)  # __init__ below: the generated one is slow
class Scan:
    idents: IdentList = field(default_factory=IdentList)
    includes: list[Include] = field(default_factory=list)
    directives: list[Directive] = field(default_factory=list)
    # (start, end, ctx) of every comment and literal, in order; the complement is code
    spans: list[tuple[int, int, Ctx]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # the language front end's own structure (Python tokens and tree, CMake commands, Make words);
    # None for C-family text, whose structure is the lists above
    tree: object = None
    _codemap: CodeMap | None = field(default=None, repr=False, compare=False)
    # the candidate prefixes the C-family scanner stopped at (empty: no such promise, see `may_hold`)
    prefixes: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def __init__(self, idents: IdentList = _FRESH, includes: list[Include] = _FRESH,
                 directives: list[Directive] = _FRESH, spans: list[tuple[int, int, Ctx]] = _FRESH,
                 problems: list[Problem] = _FRESH, tree: object = None, _codemap: CodeMap | None = None,
                 prefixes: tuple[str, ...] = ()) -> None:
        """What the dataclass would generate (a fresh container for each not given), without its
        default-factory tests: the compiled scanner's result makes one for every file, all given.
        `tests/test_scanner.py` compares it with the fields' defaults."""
        self.idents = IdentList() if idents is _FRESH else idents
        self.includes = [] if includes is _FRESH else includes
        self.directives = [] if directives is _FRESH else directives
        self.spans = [] if spans is _FRESH else spans
        self.problems = [] if problems is _FRESH else problems
        self.tree = tree
        self._codemap = _codemap
        self.prefixes = prefixes

    def code_map(self) -> CodeMap:
        """The code map of these spans, made once (several passes ask for it)."""
        if self._codemap is None:
            self._codemap = CodeMap(self.spans)
        return self._codemap

    def may_hold(self, names: frozenset[str]) -> bool:
        """Whether one of `names` may stand as a whole word in code or a directive (outside every
        comment and literal). The answer "no" is exact: none of them is a candidate identifier,
        and the scanner reports every whole word in code that starts with one of its prefixes,
        which each of them does (an ASCII identifier). A pass whose every finding needs such a
        word is not run on a file without one (`musify.runner.edit_text`)."""
        return not names.isdisjoint(self.idents.names) or not reported_words(names, self.prefixes)


# what a context holds once its file's passes are done (`runner.edit_text`): one shared empty
# scan, which nothing writes to, rather than a new one for each file
NO_SCAN = Scan()


# Vendor-looking identifiers are always candidates, rule or no rule: the unknown-name pass needs them.
VENDOR_PREFIXES = ("cu", "CU", "__cu", "__CU", "nv", "NV", "__nv", "__NV", "nccl", "NCCL", "npp", "NPP")

_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_CHAR_PREFIXES = ("u8", "u", "U", "L")
_KEYWORD = lazy_pattern(globals(), "_KEYWORD", r"[ \t]*([A-Za-z_]\w*)?")
_STR_BODY = lazy_pattern(globals(), "_STR_BODY", r'(?:[^"\\\n]|\\(?:\r?\n|.))*(")?')
_CHR_BODY = lazy_pattern(globals(), "_CHR_BODY", r"(?:[^'\\\n]|\\(?:\r?\n|.))*(')?")
_INCLUDE_PATH = lazy_pattern(globals(), "_INCLUDE_PATH", r'[ \t]*(?:<([^>\n]*)>|"([^"\n]*)")')
_DEFINE_NAME = lazy_pattern(globals(), "_DEFINE_NAME", r"[ \t]*([A-Za-z_]\w*)")
_IDENT = re.compile(r"[A-Za-z_]\w*")

_DIRECTIVE_CTX = {"define": Ctx.MACRO, "include": Ctx.INCLUDE, "include_next": Ctx.INCLUDE, "import": Ctx.INCLUDE}
_MESSAGE_DIRECTIVES = frozenset({"error", "warning"})


def trie_regex(words: tuple[str, ...] | list[str]) -> str:
    """One regex alternation shaped as a trie (`cu(?:da|[A-Z])|nv...`).

    Python's regex engine tries a flat alternation of N literals one by one at every position;
    a trie makes that a walk of a few characters, which keeps the scanner fast with hundreds of
    prefixes.
    """
    trie: dict = {}
    for w in set(words):
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        if "" in node and len(node) == 1:
            return ""
        alts = []
        singles = []
        for ch in sorted(k for k in node if k):
            sub = emit(node[ch])
            if sub:
                alts.append(re.escape(ch) + sub)
            else:
                singles.append(re.escape(ch))
        if singles:
            alts.append(singles[0] if len(singles) == 1 else "[" + "".join(singles) + "]")
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:  # a word ends here: the longer words are optional
            return "(?:" + body + ")?"
        return body

    return emit(trie)


_REPORTED: dict[int, tuple[frozenset[str], tuple[str, ...], bool]] = {}


def reported_words(names: frozenset[str], prefixes: tuple[str, ...]) -> bool:
    """Whether the scanner, stopping at `prefixes`, reports every whole-word use of each of
    `names` as a candidate identifier: each is an ASCII identifier that starts with a prefix.
    Answered once per (names, prefixes) pair, both kept by identity (a run has one of each)."""
    entry = _REPORTED.get(id(names))
    if entry is None or entry[0] is not names or entry[1] is not prefixes:
        if len(_REPORTED) >= 64:
            _REPORTED.clear()
        ok = bool(prefixes) and all(n.isascii() and n.isidentifier() and n.startswith(prefixes) for n in names)
        entry = _REPORTED[id(names)] = (names, prefixes, ok)
    return entry[2]


def candidate_prefixes(names: list[str] | set[str], width: int = 3) -> tuple[str, ...]:
    """The prefixes the scanner stops at: the vendor prefixes plus the first `width` chars of each
    name that a vendor prefix does not already cover."""
    out = set(VENDOR_PREFIXES)
    for name in names:
        if not name.startswith(VENDOR_PREFIXES):
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
    """Scan `text`; identifiers starting with one of `prefixes` are reported with their context.

    The compiled scanner when it is built (and the prefixes are plain ASCII words), else the
    Python one; both give the same result."""
    if _NATIVE is not None:
        found = _NATIVE.scan(text, prefixes)
        if found is not None:
            rows, itemsize, names, includes, directives, spans, problems, contexts, header_tests = found
            # (`native_idents`, without its call: every file is scanned)
            made = Scan(IdentList(array("i" if itemsize == 4 else "q", rows), names, contexts), includes, directives,
                        spans, problems, None, None, prefixes)
            return _header_tests(text, made) if header_tests else made
    return _header_tests(text, scan_python(text, prefixes))


def _header_tests(text: str, made: Scan) -> Scan:
    """`header_tests.apply` (imported on the first file with a `#if` that may test for a header)."""
    from musify.frontend import header_tests

    return header_tests.apply(text, made)


def native_idents(data: bytes, itemsize: int, names: list[str], contexts: int | None = None) -> IdentList:
    """The `IdentList` of the compiled scanner's rows (`itemsize` bytes a value; `contexts`: their
    contexts as bits, None: found from the rows when asked)."""
    # (bytes: read as by `frombytes`)
    return IdentList(array("i" if itemsize == 4 else "q", data), names, contexts)


def scan_python(text: str, prefixes: tuple[str, ...] = VENDOR_PREFIXES) -> Scan:
    """The pure-Python scanner (the reference for `_cscan`).

    Two regex passes keep Python off the per-character path: one over the few characters that
    open comments, literals and directives (a character-set search), one over candidate
    identifiers (a trie of literal prefixes); a linear merge then gives each identifier its
    context.
    """
    out = Scan()
    out.prefixes = prefixes
    _lex(text, out)
    _label_identifiers(text, _ident_pattern(prefixes), out)
    return out


_SPECIAL = lazy_pattern(globals(), "_SPECIAL", r"[/\"'#]")
# a raw string's delimiter: up to 16 characters, none of them a blank, a parenthesis or a backslash
# (a '"' is one: CUTLASS's nvrtc tests write `R"""(...)"""`, the delimiter `""`)
_RAW_OPEN = lazy_pattern(globals(), "_RAW_OPEN", r'R"([^()\\\s]{0,16})\(')


@lru_cache(maxsize=8)
def _ident_pattern(prefixes: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("(?:" + trie_regex(prefixes) + r")\w*")


def _lex(text: str, out: Scan) -> None:
    """Comments, literals and directives, in order (the first pass)."""
    spans = out.spans
    n = len(text)
    pos = 0
    directive_end = -1
    search = _SPECIAL.search
    while True:
        m = search(text, pos)
        if m is None:
            return
        start = m.start()
        c = text[start]
        if c == "/":
            nxt = text[start + 1:start + 2]
            if nxt == "/":
                end = text.find("\n", start)
                end = n if end < 0 else end
                while end < n and (text[end - 1:end] == "\\" or text[end - 2:end] == "\\\r"):
                    nl = text.find("\n", end + 1)  # a continued comment goes on to the next line
                    end = n if nl < 0 else nl
                spans.append((start, end, Ctx.COMMENT))
                pos = end
            elif nxt == "*":
                close = text.find("*/", start + 2)
                if close < 0:
                    out.problems.append(Problem(start, "comment"))
                    end = n
                else:
                    end = close + 2
                spans.append((start, end, Ctx.COMMENT))
                pos = end
            else:
                pos = start + 1
        elif c == '"':
            raw = _raw_string_start(text, start)
            if raw is not None:
                lit_start, delim = raw
                closer = ")" + delim + '"'
                close = text.find(closer, start + 2 + len(delim))
                if close < 0:
                    out.problems.append(Problem(lit_start, "raw string literal"))
                    end = n
                else:
                    end = close + len(closer)
                spans.append((lit_start, end, Ctx.STRING))
                pos = end
                continue
            b = _STR_BODY.match(text, start + 1)
            end = b.end()
            if b.group(1) is None:
                out.problems.append(Problem(start, "string literal"))
            spans.append((start, end, Ctx.STRING))
            pos = end
        elif c == "'":
            if start and text[start - 1] in _WORD_CHARS and not _is_literal_prefix(text, start):
                pos = start + 1  # a digit separator (1'000'000) rather than a character literal
                continue
            b = _CHR_BODY.match(text, start + 1)
            end = b.end()
            if b.group(1) is None:
                out.problems.append(Problem(start, "character literal"))
            spans.append((start, end, Ctx.CHAR))
            pos = end
        else:  # '#': a directive starts when only blanks precede it on its line
            line_start = text.rfind("\n", 0, start) + 1
            if start < directive_end or text[line_start:start].strip(" \t\ufeff"):
                pos = start + 1  # stringizing, token pasting, or a stray '#'
                continue
            pos, directive_end = _directive(text, start, out)


def _raw_string_start(text: str, quote: int) -> tuple[int, str] | None:
    """(literal start, delimiter) when the quote at `quote` opens a raw string (`R"x(`, `u8R"(`)."""
    if quote < 1 or text[quote - 1] != "R":
        return None
    m = _RAW_OPEN.match(text, quote - 1)
    if m is None:
        return None
    s = quote - 1
    for p in _CHAR_PREFIXES:
        if s >= len(p) and text.startswith(p, s - len(p)):
            s -= len(p)
            break
    if s and text[s - 1] in _WORD_CHARS:
        return None  # an identifier ending in R followed by a string: not a raw string
    return s, m.group(1)


def _directive(text: str, start: int, out: Scan) -> tuple[int, int]:
    """Record the directive at `start`; returns (where to continue lexing, its logical end)."""
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
            out.spans.append((p.start(g), p.end(g), Ctx.INCLUDE))
            pos = p.end()
    elif keyword in ("define", "undef", "ifdef", "ifndef"):
        d = _DEFINE_NAME.match(text, pos)
        if d:
            name = d.group(1)
            pos = d.end(1)
    elif keyword in _MESSAGE_DIRECTIVES:
        out.spans.append((pos, end, Ctx.STRING))
        pos = end
    out.directives.append(Directive(start, end, keyword, name))
    return pos, end


def _label_identifiers(text: str, pattern: re.Pattern[str], out: Scan) -> None:
    """Candidate identifiers in code and directives, each with its context (the second pass)."""
    spans = out.spans
    directives = out.directives
    add = out.idents.add
    si = di = 0
    ns, nd = len(spans), len(directives)
    define_names = {d.start: d for d in directives if d.keyword == "define" and d.name}
    for m in pattern.finditer(text):
        start = m.start()
        if start and text[start - 1] in _WORD_CHARS:
            continue  # inside a longer word
        while si < ns and spans[si][1] <= start:
            si += 1
        if si < ns and spans[si][0] <= start:
            continue  # inside a comment, literal or include path
        while di < nd and directives[di].end <= start:
            di += 1
        ctx = Ctx.CODE
        if di < nd and directives[di].start <= start:
            d = directives[di]
            ctx = _DIRECTIVE_CTX.get(d.keyword, Ctx.DIRECTIVE)
            if d.start in define_names and ctx == Ctx.MACRO and _is_define_name(text, d, start):
                ctx = Ctx.MACRO_NAME
        add(start, m.end(), m.group(), ctx)


def _is_define_name(text: str, d: Directive, start: int) -> bool:
    """True when `start` is where the #define's own name is written."""
    m = _DEFINE_NAME.match(text, text.index("define", d.start) + 6)
    return m is not None and m.start(1) == start


def identifiers_in(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """Every identifier in text[start:end] (for rewriting inside comments and strings on request)."""
    return [(m.start(), m.end(), m.group()) for m in _IDENT.finditer(text, start, end)]


def _load_native():
    """The compiled scanner, bound to this module's types; None when the pure-Python path is
    used (musify/frontend/compiled.py says when)."""
    cscan = compiled.load("_cscan")
    if cscan is not None:
        cscan.bind(Ident, Include, Directive, Problem, tuple(Ctx))
    return cscan


_NATIVE = _load_native()


def native():
    """The compiled module (`scan`, and `renames` for the identifier pass), or None."""
    return _NATIVE


SCANNER = "c" if _NATIVE is not None else "python"  # which scanner runs, for reports and tests
