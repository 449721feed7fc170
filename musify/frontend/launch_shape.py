"""Launch statements whose syntax tree is known without parsing them.

The structure pass asks tree-sitter whether each `kernel<<<config>>>(args);` it found reads as a
kernel call; on a corpus of small files that parse was a quarter of the pass. Most launches are
plain: a kernel name, then launch parameters and arguments that are names, numbers, member
accesses, one call or index, unary `-`/`&`, `+ - * / %` and one level of parentheses. Such a
statement always reads as exactly one `kernel_call_syntax` with no error, provided none of its
words is special to the grammar (a keyword, a type name like `int` or `size_t`, `this`...). That
is asked of tree-sitter once per distinct word in a run (`plain_words`, many words in one parse),
so the grammar's own word list decides. Anything else (templates, namespaces,
casts, comparisons, comments, continued lines, non-ASCII) is parsed as before.
tests/test_launches.py checks the claim against tree-sitter on generated statements of this
shape and on the corpora's launches.
"""

from __future__ import annotations

import re

from musify.frontend import syntax

_NAME = r"[A-Za-z_]\w*"
_NUMBER = r"(?:0[xX][0-9a-fA-F]+[uUlL]*|\d+\.\d+[fF]?|\d+[uUlL]*)"
_ATOM = rf"(?:{_NAME}(?:\s*(?:\.|->)\s*{_NAME})*|{_NUMBER})"
_INNER = rf"-?\s*{_ATOM}(?:\s*[-+*/%]\s*-?\s*{_ATOM})*"
_TERM = (rf"(?:{_NAME}\s*\(\s*{_INNER}(?:\s*,\s*{_INNER})*\s*\)|{_NAME}\s*\[\s*{_INNER}\s*\]"
         rf"|\(\s*{_INNER}\s*\)|{_ATOM})")
_EXPR = rf"[-&]?\s*{_TERM}(?:\s*[-+*/%]\s*[-&]?\s*{_TERM})*"
_LIST = rf"{_EXPR}(?:\s*,\s*{_EXPR})*"
SHAPE = re.compile(rf"{_NAME}\s*<<<\s*{_LIST}\s*>>>\s*\(\s*(?:{_LIST})?\s*\);", re.ASCII)
_WORD = re.compile(rf"\b{_NAME}", re.ASCII)  # the words, not the suffixes of numbers (`0x10`, `64UL`)


def plain_launches(statements: list[str]) -> bool:
    """Every one of `statements` (a launch and its ';' each) has the plain shape and only plain
    words, so that tree-sitter reads them, alone or together, as kernel calls without errors."""
    words: set[str] = set()
    for statement in statements:
        if SHAPE.fullmatch(statement) is None or "//" in statement or "/*" in statement:
            return False  # ('/' is division in the shape, but never the start of a comment)
        words.update(_WORD.findall(statement))
    return plain_words(words)


def plain_launch(statement: str) -> bool:
    """`plain_launches` of one statement."""
    return plain_launches([statement])


_PLAIN: dict[str, bool] = {}  # word -> plain, for the run (a word is asked about once)
_KEEP = 1 << 17  # words remembered at most (then forgotten, and asked about again)


def plain_words(words: set[str]) -> bool:
    """Each word is an ordinary identifier to tree-sitter. The words not asked about before are
    asked together, as one statement each (`w;` must read as an expression statement of one
    identifier spelled `w`); when that parse has an error, each is asked on its own."""
    new = sorted(w for w in words if w not in _PLAIN)
    if new:
        if len(_PLAIN) + len(new) > _KEEP:
            _PLAIN.clear()
        answers = _identifier_statements(new)
        if answers is None:
            answers = [(_identifier_statements([w]) or [False])[0] for w in new]
        _PLAIN.update(zip(new, answers))
    return all(_PLAIN[w] for w in words)


def _identifier_statements(words: list[str]) -> list[bool] | None:
    """For `w1;\nw2;...`: whether each statement is the identifier itself; None when the parse
    has an error or does not have one statement per word."""
    tree = syntax.parse_statement("\n".join(f"{w};" for w in words))
    body = tree.root.named_children[0].child_by_field_name("body") if tree.ok else None
    statements = body.named_children if body is not None else []
    if len(statements) != len(words):
        return None
    out = []
    for word, statement in zip(words, statements):
        inner = statement.named_children if statement.type == "expression_statement" else []
        out.append(len(inner) == 1 and inner[0].type == "identifier" and inner[0].text == word.encode())
    return out if all(out) or len(words) == 1 else None
