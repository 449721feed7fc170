"""Launch statements whose syntax tree is known without parsing them.

The structure pass asks tree-sitter whether each `kernel<<<config>>>(args);` it found reads as a
kernel call; on a corpus of small files that parse was a quarter of the pass. Most launches are
plain: a kernel name, then launch parameters and arguments that are names, numbers, member
accesses, one call or index, unary `-`/`&`, `+ - * / %` and one level of parentheses. Such a
statement always reads as exactly one `kernel_call_syntax` with no error, provided none of its
words is special to the grammar (a keyword, a type name like `int` or `size_t`, `this`...). That
is asked of tree-sitter once per distinct word (`plain_word`), with the word in every position
the shape allows, so the grammar's own word list decides. Anything else (templates, namespaces,
casts, comparisons, comments, continued lines, non-ASCII) is parsed as before.
tests/test_launches.py checks the claim against tree-sitter on generated statements of this
shape and on the corpora's launches.
"""

from __future__ import annotations

import re
from functools import lru_cache

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
_WORD = re.compile(_NAME, re.ASCII)


def plain_launch(statement: str) -> bool:
    """`statement` (a launch and its ';') has the plain shape and only plain words, so that
    tree-sitter reads it, alone or among others like it, as one kernel call without errors."""
    if SHAPE.fullmatch(statement) is None or "//" in statement or "/*" in statement:
        return False  # ('/' is division in the shape, but never the start of a comment)
    return all(plain_word(w) for w in set(_WORD.findall(statement)))


@lru_cache(maxsize=1 << 16)
def plain_word(word: str) -> bool:
    """tree-sitter reads `word` as an ordinary identifier wherever the plain shape puts one: a
    statement of its own, a kernel name, a launch parameter, a callee, an array, a member."""
    alone = syntax.parse_statement(f"{word};")
    body = alone.root.named_children[0].child_by_field_name("body") if alone.ok else None
    statements = body.named_children if body is not None else []
    if len(statements) != 1 or statements[0].type != "expression_statement":
        return False
    inner = statements[0].named_children
    if len(inner) != 1 or inner[0].type != "identifier" or inner[0].text != word.encode():
        return False
    w = word
    every_role = syntax.parse_statement(f"{w}<<<{w}, {w}.{w}>>>({w}({w}), {w}[{w}], {w}->{w}, -{w}, &{w} * {w});")
    return every_role.ok and syntax.count_kernel_calls(every_role.root) == 1
