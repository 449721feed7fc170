"""Launch statements tree-sitter-cuda certainly reads, recognised without it.

The structure pass parses each launch statement with tree-sitter to report the ones the grammar
cannot read (MU0007). Most launches are plain: a kernel name, a configuration and arguments made
of names, numbers, member accesses, calls, subscripts and arithmetic. `well_formed` recognises
that subset exactly as written here (a grammar far smaller than C++'s), and a launch in it is
counted as read without a parse: on a corpus of small CUDA files nine launches in ten are plain,
and the parses were a fifth of the structure pass.

What keeps the claim safe:
- the subset leaves out everything where C++ is ambiguous or tree-sitter-cuda is known to differ:
  `<` and `>` outside a kernel's simple template arguments, casts, lambdas, braces, literals other
  than plain numbers (`09` is not one), comments, `#` and `\\`, assignment and `?:`;
- a word the grammar knows (a keyword, a node kind, a primitive type: `reserved_words`) is never
  taken for a name, except `sizeof`, `nullptr`, `true` and `false` where the subset places them;
- tests/test_launch_shape.py parses generated launches of the subset and every word of the
  CUDA and PyTorch headers in seven positions with tree-sitter, and checks the compiled
  recogniser (`_claunch.launch_shape`) against this module's Python, the reference and the
  fallback (MUSIFY_PURE_PYTHON=1).
"""

from __future__ import annotations

import re
from functools import lru_cache

from musify.frontend import compiled

# the tokens of the subset; anything else (another character, a number of another form, a
# word running into a non-ASCII letter) ends the recognition; compiled on first use (re's cache):
# only the pure-Python recogniser reads it, and compiling it is ~0.5 ms of every start-up
_TOKEN = r"""
  (?P<ws>[ \t\r\n]+)
 |(?P<num>(?:0[xX][0-9a-fA-F]+|(?:0|[1-9][0-9]*)(?:\.[0-9]+[fF]?)?)(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)?(?![\w.]))
 |(?P<id>[A-Za-z_][A-Za-z0-9_]*(?!\w))
 |(?P<op>\+\+|--|::|->|&&|\|\||==|!=|<<<|>>>|[-+*/%&|^!~.,()\[\]<>])
"""
# tree-sitter-c's `primitive_type` words: one token of the grammar, so not among its node kinds
PRIMITIVE_TYPES = frozenset({
    "bool", "char", "int", "float", "double", "void", "size_t", "ssize_t", "ptrdiff_t", "intptr_t", "uintptr_t",
    "charptr_t", "nullptr_t", "max_align_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
    "uint32_t", "uint64_t", "char8_t", "char16_t", "char32_t", "char64_t"})
_LITERALS = frozenset({"nullptr", "true", "false"})  # words the subset reads as values
_ALSO_RESERVED = frozenset({"TRUE", "FALSE", "NULL", "nullptr", "true", "false", "this", "sizeof"})
_BINARY = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "&&", "||", "==", "!="})
_UNARY = frozenset({"-", "+", "!", "~", "*", "&"})
MAX_DEPTH = 32  # brackets nested deeper are left to tree-sitter (and the C recursion bounded)
_WORD = re.compile(r"[A-Za-z_]\w*")

_NATIVE = compiled.load("_claunch")  # `launch_shape` in C (_claunch_shape.c), or None


@lru_cache(maxsize=1)
def reserved_words() -> frozenset[str]:
    """The words never read as a name: every word-shaped node kind of tree-sitter-cuda's grammar
    (its keywords, `true`, `this`, ...; some are never written, which only sends a launch to the
    parser), the primitive types, and the literal words."""
    from musify.frontend.syntax import parser

    language = parser().language
    kinds = (language.node_kind_for_id(i) for i in range(language.node_kind_count))
    return frozenset(k for k in kinds if k and _WORD.fullmatch(k)) | PRIMITIVE_TYPES | _ALSO_RESERVED


def well_formed(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is a launch `kernel<<<config>>>(args)` of the subset, which
    tree-sitter-cuda reads with no error and exactly one kernel call (compiled where built)."""
    if _NATIVE is None:
        return well_formed_python(text, start, end, reserved_words())
    return _NATIVE.launch_shape(text, start, end, reserved_words())


def well_formed_python(text: str, start: int, end: int, reserved: frozenset[str]) -> bool:
    """`well_formed` in Python: the reference the compiled recogniser is tested against."""
    tokens = _tokens(text, start, end)
    return tokens is not None and _Reader(tokens, reserved).launch()


def _tokens(text: str, start: int, end: int) -> list[tuple[str, str]] | None:
    out = []
    pos, end = max(start, 0), min(end, len(text))
    token = re.compile(_TOKEN, re.VERBOSE)
    while pos < end:
        m = token.match(text, pos, end)
        if m is None:
            return None
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        if kind == "op" and m.group() == "/" and pos < end and text[pos] in "/*":
            return None  # a comment
        out.append((kind, m.group()))
    return out


class _Reader:
    """Recursive descent over the tokens; every method consumes what it read and answers
    whether it was there (a failure anywhere rejects the launch, so no backtracking)."""

    def __init__(self, tokens: list[tuple[str, str]], reserved: frozenset[str]) -> None:
        self.tokens, self.at, self.reserved, self.depth = tokens, 0, reserved, 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.at] if self.at < len(self.tokens) else ("", "")

    def take(self, value: str) -> bool:
        if self.peek()[1] != value:
            return False
        self.at += 1
        return True

    def word(self) -> bool:
        kind, value = self.peek()
        if kind != "id" or value in self.reserved:
            return False
        self.at += 1
        return True

    def name(self) -> bool:  # word (:: word)*
        if not self.word():
            return False
        while self.take("::"):
            if not self.word():
                return False
        return True

    def launch(self) -> bool:
        self.take("::")
        if not self.name():
            return False
        if self.take("<") and not self.list(self.template_argument, ">"):
            return False
        if not self.take("<<<") or not self.list(self.expression, ">>>"):
            return False
        return self.take("(") and self.arguments(")") and self.at == len(self.tokens)

    def template_argument(self) -> bool:
        kind, value = self.peek()
        if kind == "num" or value in PRIMITIVE_TYPES:
            self.at += 1
            return True
        return self.name()

    def list(self, item, close: str) -> bool:  # item (, item)* close
        while True:
            if not item():
                return False
            if self.take(close):
                return True
            if not self.take(","):
                return False

    def arguments(self, close: str) -> bool:  # [expression (, expression)*] close
        return self.take(close) or self.list(self.expression, close)

    def expression(self) -> bool:  # unary (binary unary)*
        self.depth += 1
        ok = self.depth <= MAX_DEPTH and self.unary()
        while ok and self.peek()[1] in _BINARY and self.peek()[0] == "op":
            self.at += 1
            ok = self.unary()
        self.depth -= 1
        return ok

    def unary(self) -> bool:
        while self.peek()[0] == "op" and self.peek()[1] in _UNARY:
            self.at += 1
        return self.postfix()

    def postfix(self) -> bool:
        if not self.primary():
            return False
        while True:
            value = self.peek()[1]
            if value in (".", "->"):
                self.at += 1
                if not self.word():
                    return False
            elif value == "[":
                self.at += 1
                if not (self.expression() and self.take("]")):
                    return False
            elif value == "(":
                self.at += 1
                if not self.arguments(")"):
                    return False
            else:
                return True

    def primary(self) -> bool:
        kind, value = self.peek()
        if kind == "num" or (kind == "id" and value in _LITERALS):
            self.at += 1
            return True
        if kind == "id" and value == "sizeof":  # sizeof(type or name)
            self.at += 1
            if not self.take("("):
                return False
            if self.peek()[1] in PRIMITIVE_TYPES:
                self.at += 1
            elif not self.name():
                return False
            return self.take(")")
        if kind == "id":
            return self.name()
        if value == "(":
            self.at += 1
            return self.expression() and self.take(")")
        return False
