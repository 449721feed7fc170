"""The Python front end: the standard `tokenize` for comments and strings, `ast` for structure.

Edits made from it touch only names and the string literals a pass has chosen, so comments,
docstrings and formatting come out byte for byte. `ast` reports columns in UTF-8 bytes;
`PythonTree.offset` turns them into offsets of the decoded text the engine edits. A file that
`ast` cannot parse (Python 2, a syntax error, undecodable bytes) gets no tree, only the reason.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from dataclasses import dataclass, field

from musify.frontend.scanner import Ctx, LineIndex, Scan


@dataclass
class PythonTree:
    module: ast.Module | None
    error: str = ""  # why the file did not parse ("" when it did)
    error_line: int = 1
    line_starts: list[int] = field(default_factory=list)
    text: str = ""

    @property
    def nodes(self) -> list[ast.AST]:
        """Every node, in `ast.walk` order, computed once (several passes look at all of them)."""
        cached = self.__dict__.get("_nodes")
        if cached is None:
            cached = list(ast.walk(self.module)) if self.module is not None else []
            self.__dict__["_nodes"] = cached
        return cached

    def offset(self, lineno: int, col_bytes: int) -> int:
        """The text offset of an `ast` position (1-based line, UTF-8 byte column)."""
        start = self.line_starts[lineno - 1]
        if col_bytes == 0:
            return start
        line = self.text[start:start + col_bytes]
        if line.isascii():
            return start + col_bytes
        end = self.text.find("\n", start)
        raw = self.text[start:len(self.text) if end < 0 else end].encode("utf-8", "surrogateescape")
        return start + len(raw[:col_bytes].decode("utf-8", "surrogateescape"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        """(start, end) text offsets of a node that has a position."""
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]


# A Python 3.11 comment or string literal (prefix, one of the four quotes, escapes), found from the
# left: outside them no `#` or quote can stand, so each match is one token as `tokenize` gives it.
# A prefix letter right after a word character belongs to the word (`if'a'`: NAME `if`, STRING `'a'`).
_ESCAPE = r"\\(?:\r\n|.)"  # a backslash and what it escapes (a CRLF line end counts as one)
_TRIPLE_1 = rf"'''(?:[^'\\]|{_ESCAPE}|'(?!''))*'''"
_TRIPLE_2 = rf'"""(?:[^"\\]|{_ESCAPE}|"(?!""))*"""'
_SINGLE_1 = rf"'(?:[^'\\\r\n]|{_ESCAPE})*'"
_SINGLE_2 = rf'"(?:[^"\\\r\n]|{_ESCAPE})*"'
_TOKEN = re.compile(rf"#[^\r\n]*|(?:(?<!\w)[rRbBuUfF]{{1,2}})?(?:{_TRIPLE_1}|{_TRIPLE_2}|{_SINGLE_1}|{_SINGLE_2})",
                    re.DOTALL)


def scan_python(text: str, _ruleset: object = None) -> Scan:
    """Comment and string spans, the `ast` module (or why there is none) as `tree`.

    The spans come from one regular expression (`tokenize` is pure Python and was a third of the
    Python front end's time); where its string starts disagree with the tree's string literals
    (syntax newer than the expression knows, such as Python 3.12's nested f-string quotes) the
    file is tokenized as before. tests/test_python_spans.py holds the two to the same spans."""
    out = Scan()
    starts = LineIndex(text)._starts
    tree = PythonTree(None, line_starts=starts, text=text)
    out.tree = tree
    if "\r" in text.replace("\r\n", ""):
        tree.error = "a lone carriage return ends a line (Python would count lines differently)"
        return out
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. are the user's business
            tree.module = ast.parse(text)
    except SyntaxError as exc:
        tree.error = f"{exc.msg}" + (f" (line {exc.lineno})" if exc.lineno else "")
        tree.error_line = max(1, exc.lineno or 1)
        return out
    except (ValueError, UnicodeError, RecursionError, MemoryError) as exc:
        tree.error = f"{exc.__class__.__name__}: {exc}"
        return out
    spans = regex_spans(text)
    if not _agrees(spans, tree):
        try:
            spans = tokenize_spans(text, starts)
        except (tokenize.TokenError, SyntaxError) as exc:  # ast accepted it: a tokenize corner case
            tree.error = f"tokenize: {exc}"
            tree.module = None
            return out
    out.spans = spans
    return out


def regex_spans(text: str) -> list[tuple[int, int, Ctx]]:
    """The comment and string spans of a file that parses, by `_TOKEN`."""
    comment, string = Ctx.COMMENT, Ctx.STRING
    return [(m.start(), m.end(), comment if text[m.start()] == "#" else string) for m in _TOKEN.finditer(text)]


def tokenize_spans(text: str, starts: list[int]) -> list[tuple[int, int, Ctx]]:
    """The comment and string spans by `tokenize` (the reference, and the fallback)."""
    spans = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT or tok.type == tokenize.STRING:
            s = starts[tok.start[0] - 1] + tok.start[1]
            e = starts[tok.end[0] - 1] + tok.end[1]
            spans.append((s, e, Ctx.COMMENT if tok.type == tokenize.COMMENT else Ctx.STRING))
    return spans


def _agrees(spans: list[tuple[int, int, Ctx]], tree: PythonTree) -> bool:
    """Every string literal of the tree (outside f-strings, whose inner positions older Pythons
    report oddly) starts where a string span starts."""
    string_starts = {s for s, _, where in spans if where == Ctx.STRING}
    inside: set[int] = set()
    for node in tree.nodes:
        if id(node) in inside:
            continue
        if isinstance(node, ast.JoinedStr):
            inside.update(id(n) for n in ast.walk(node) if n is not node)
        elif not (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
            continue
        if tree.offset(node.lineno, node.col_offset) not in string_starts:
            return False
    return True
