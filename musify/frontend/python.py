"""The Python front end: the standard `tokenize` for comments and strings, `ast` for structure.

Edits made from it touch only names and the string literals a pass has chosen, so comments,
docstrings and formatting come out byte for byte. `ast` reports columns in UTF-8 bytes;
`PythonTree.offset` turns them into offsets of the decoded text the engine edits. A file that
`ast` cannot parse (Python 2, a syntax error, undecodable bytes) gets no tree, only the reason.
"""

from __future__ import annotations

import ast
import io
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


def scan_python(text: str, _ruleset: object = None) -> Scan:
    """Comment and string spans from `tokenize`, the `ast` module (or why there is none) as `tree`."""
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
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT or tok.type == tokenize.STRING:
                s = starts[tok.start[0] - 1] + tok.start[1]
                e = starts[tok.end[0] - 1] + tok.end[1]
                out.spans.append((s, e, Ctx.COMMENT if tok.type == tokenize.COMMENT else Ctx.STRING))
    except (tokenize.TokenError, SyntaxError) as exc:  # ast accepted it: a tokenize corner case
        tree.error = f"tokenize: {exc}"
        tree.module = None
    return out
