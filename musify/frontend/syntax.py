"""tree-sitter-cuda, used where a structural question needs a real syntax tree.

Parsing runs at a few MB/s, slower than the whole lexical pipeline, so musify never parses a
whole file just in case: a pass hands over the snippet around a construct it found lexically
(a launch statement, a kernel signature, a function body with a warp-size trigger) and asks
for its tree. Snippets are wrapped so that statements parse as statements.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from musify.classes import dataclass

if TYPE_CHECKING:  # imported when the first snippet is parsed: most runs never need a tree
    import tree_sitter

_WRAP_PREFIX = b"void __musify_snippet__() {\n"
_WRAP_SUFFIX = b"\n}\n"


@lru_cache(maxsize=1)
def parser() -> tree_sitter.Parser:
    import tree_sitter
    import tree_sitter_cuda

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


def parse(source: str | bytes) -> tree_sitter.Tree:
    data = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    return parser().parse(data)


@dataclass(frozen=True, slots=True)
class SnippetParse:
    ok: bool
    root: tree_sitter.Node
    offset: int  # bytes of wrapper before the snippet


def parse_statement(snippet: str) -> SnippetParse:
    """Parse one statement (or a few) inside a function body."""
    data = _WRAP_PREFIX + snippet.encode("utf-8", "surrogateescape") + _WRAP_SUFFIX
    tree = parser().parse(data)
    return SnippetParse(not tree.root_node.has_error, tree.root_node, len(_WRAP_PREFIX))


def parse_toplevel(snippet: str) -> SnippetParse:
    """Parse a declaration or definition at namespace scope."""
    tree = parse(snippet)
    return SnippetParse(not tree.root_node.has_error, tree.root_node, 0)


@lru_cache(maxsize=32)
def query(source: str) -> tree_sitter.Query:
    """A compiled tree-sitter query (compiling one costs tens of milliseconds: do it once)."""
    import tree_sitter

    return tree_sitter.Query(parser().language, source)


def captures(node: tree_sitter.Node, source: str) -> dict[str, list[tree_sitter.Node]]:
    """The nodes under `node` that a query captures, by capture name (matched in C, no Python walk)."""
    import tree_sitter

    return tree_sitter.QueryCursor(query(source)).captures(node)


def count_nodes(node: tree_sitter.Node, node_type: str) -> int:
    """How many descendants of `node` have the given type."""
    return len(captures(node, f"({node_type}) @n").get("n", ()))


_LAUNCH_OPEN = b"<<<"


def count_kernel_calls(node: tree_sitter.Node) -> int:
    """`count_nodes(node, "kernel_call_syntax")` without a query (compiling one costs 60 ms a
    process, counting with it 20 us a tree): a `kernel_call_syntax` node has exactly one `<<<`
    token among its children, so the nodes are counted as the `<<<` tokens (found where the bytes
    `<<<` occur) whose parent is one. tests/test_launches.py checks it against `count_nodes`."""
    source, base = node.text, node.start_byte
    count = 0
    at = source.find(_LAUNCH_OPEN)
    while at >= 0:
        token = node.descendant_for_byte_range(base + at, base + at + 3)
        if token is not None and token.type == "<<<" and token.start_byte == base + at \
                and token.end_byte == base + at + 3:
            parent = token.parent
            if parent is not None and parent.type == "kernel_call_syntax":
                count += 1
        at = source.find(_LAUNCH_OPEN, at + 1)
    return count
