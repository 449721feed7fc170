"""The Python front end: `ast` for structure, one regular expression for comments and strings.

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

from musify.frontend import compiled
from musify.frontend.scanner import Ctx, LineIndex, Scan

_NATIVE = compiled.load("_cscan")  # `walk` and `PythonTree.of` in C (_cscan_pytree.c), or None
if _NATIVE is not None and not hasattr(_NATIVE, "walk_ast"):
    _NATIVE = None  # an extension built before they were added: the Python reference


class PythonTree:
    """A file's `ast` module, parsed when first asked for (`module`, `error`, `error_line`): the
    Python pass asks only of a file that names something it rewrites (`python_torch._triggers`),
    and `ast.parse` was a third of the front end's time on files that name nothing of the kind
    (37% of vLLM's Python files)."""

    def __init__(self, text: str, line_starts: list[int]) -> None:
        self.text = text
        self.line_starts = line_starts

    @property
    def module(self) -> ast.Module | None:
        """The parsed module, or None (`error` says why)."""
        return self._parsed()[0]

    @property
    def error(self) -> str:
        """Why the file did not parse ("" when it did)."""
        return self._parsed()[1]

    @property
    def error_line(self) -> int:
        return self._parsed()[2]

    def _parsed(self) -> tuple[ast.Module | None, str, int]:
        made = self.__dict__.get("_made")
        if made is None:
            made = self.__dict__["_made"] = _parse(self.text)
        return made

    @property
    def nodes(self) -> list[ast.AST]:
        """Every node but the context and operator leaves, in `ast.walk` order, computed once
        (several passes look at all of them)."""
        cached = self.__dict__.get("_nodes")
        if cached is None:
            cached = walk(self.module) if self.module is not None else []
            self.__dict__["_nodes"] = cached
        return cached

    def of(self, *classes: type) -> list[ast.AST]:
        """The nodes of exactly these classes (the parser makes no subclasses), in `nodes` order:
        a pass's loop then runs its `isinstance` tests on the few nodes it handles, not on all."""
        key = frozenset(classes)
        made = self.__dict__.setdefault("_of", {})
        found = made.get(key)
        if found is None:
            found = made[key] = _NATIVE.nodes_of(self.nodes, key) if _NATIVE is not None \
                else [n for n in self.nodes if n.__class__ in key]
        return found

    def own_lines(self, node: ast.AST) -> tuple[int, int] | None:
        """(start of the node's first line, end of its last line after the line break) where no
        other statement shares those lines (a comment after it may), else None: what a pass may
        replace or remove whole."""
        start, end = self.span(node)
        text = self.text
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end + 1
        rest = text[end:line_end].strip()
        if text[line_start:start].strip() or (rest and not rest.startswith("#")):
            return None
        return line_start, line_end

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


def walk(root: ast.AST) -> list[ast.AST]:
    """The nodes of `ast.walk(root)` in its order (breadth first), less the context and operator
    leaves (`Load`, `Store`, `Add`, `Eq`, ...: no pass looks for them, and they were a third of
    the nodes): in C where it is built (`_cscan.walk_ast`), else `walk_python`."""
    if _NATIVE is not None:
        return _NATIVE.walk_ast(root, ast.AST, _LEAVES)
    return walk_python(root)


def walk_python(root: ast.AST) -> list[ast.AST]:
    """`walk` without its generators: the list is the queue (the reference the compiled walk is
    tested against). Twice as fast as `list(ast.walk(root))` on PyTorch's sources, where that walk
    was a quarter of the Python front end's time."""
    out = [root]
    append, node_class, list_class, leaves = out.append, ast.AST, list, _LEAVES
    for node in out:  # the loop reads what it appends
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list_class:
                for item in value:
                    if isinstance(item, node_class) and item.__class__ not in leaves:
                        append(item)
            elif isinstance(value, node_class) and value.__class__ not in leaves:
                append(value)
    return out


# the classes of the leaves `walk` leaves out: every subclass of these abstract node kinds
_LEAVES = frozenset(leaf for kind in (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
                    for leaf in kind.__subclasses__())


class PythonScan(Scan):
    """A Python file's scan: the tree, and its comment and string spans made when first asked for.
    The passes over Python walk the tree and never read the spans; making them with every file was
    a fifth of the Python front end's time (vLLM's package: 17.5 s with them, 13.7 s without)."""

    def __init__(self, tree: PythonTree) -> None:
        super().__init__(tree=tree)
        self.__dict__["_spans"] = None  # (made by the property below when asked for)

    @property
    def spans(self) -> list[tuple[int, int, Ctx]]:
        made = self.__dict__["_spans"]
        if made is None:
            made = self.__dict__["_spans"] = python_spans(self.tree)
        return made

    @spans.setter
    def spans(self, value: list[tuple[int, int, Ctx]]) -> None:
        self.__dict__["_spans"] = value


def python_spans(tree: PythonTree) -> list[tuple[int, int, Ctx]]:
    """The comment and string spans of a file: one regular expression (`tokenize` is pure Python
    and was a third of the Python front end's time), or, where its string starts disagree with
    the tree's string literals (syntax newer than the expression knows, such as Python 3.12's
    nested f-string quotes), `tokenize` as before; the expression's where `tokenize` itself fails
    on a file `ast` accepted (such a file was once left unmigrated: the tree is what the passes
    read). Empty for a file with no tree. tests/test_python_spans.py holds the two to the same spans."""
    if tree.module is None:
        return []
    spans = regex_spans(tree.text)
    if _agrees(spans, tree):
        return spans
    try:
        return tokenize_spans(tree.text, tree.line_starts)
    except (tokenize.TokenError, SyntaxError):  # ast accepted it: a tokenize corner case
        return spans


def scan_python(text: str, _ruleset: object = None) -> Scan:
    """The `ast` module (or why there is none) as `tree`, parsed when a pass first asks; the
    comment and string spans when asked for (`PythonScan`)."""
    return PythonScan(PythonTree(text, LineIndex(text)._starts))


def _parse(text: str) -> tuple[ast.Module | None, str, int]:
    """(module, "", 1), or (None, why it does not parse, the line)."""
    if "\r" in text.replace("\r\n", ""):
        return None, "a lone carriage return ends a line (Python would count lines differently)", 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. are the user's business
            return ast.parse(text), "", 1
    except SyntaxError as exc:
        return None, f"{exc.msg}" + (f" (line {exc.lineno})" if exc.lineno else ""), max(1, exc.lineno or 1)
    except (ValueError, UnicodeError, RecursionError, MemoryError) as exc:
        return None, f"{exc.__class__.__name__}: {exc}", 1


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
    constant, joined, text_types = ast.Constant, ast.JoinedStr, (str, bytes)
    for node in tree.of(constant, joined):
        cls = node.__class__
        if cls is joined:
            if id(node) in inside:
                continue
            inside.update(id(n) for n in walk(node)[1:])
        elif cls is not constant or node.value.__class__ not in text_types or id(node) in inside:
            continue
        if tree.offset(node.lineno, node.col_offset) not in string_starts:
            return False
    return True
