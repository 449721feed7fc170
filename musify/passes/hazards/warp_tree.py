"""The syntax-tree side of the warp-size pass: one device function parsed, the nodes its checks
read gathered in one walk, and node text cut from the function's own text.

warp_size.py says what counts as a warp-size hazard; this module only makes the tree cheap to
ask. Each `Node` that py-tree-sitter hands out is a new Python object and each `node.text` a new
bytes object to decode, and on the corpora most of the pass's time was these, not the parse:
so text is sliced from the snippet (the same characters where the snippet is ASCII, where byte
and character offsets agree), and the five node kinds the checks start from are collected by a
cursor walk that builds no child lists (a tree-sitter query does it in C, but compiling one costs
about 17 ms a process, more than the walks of a whole corpus).
"""

from __future__ import annotations

from functools import lru_cache

from musify.frontend import syntax

# the node kinds the checks start from (tests/test_warp_tree.py: what a query for them captures)
KINDS = ("call_expression", "binary_expression", "init_declarator", "for_statement", "parameter_declaration")
_WANTED = frozenset(KINDS)


class Function:
    """A device function's text (qualifiers to the closing brace) and its syntax tree."""

    __slots__ = ("ascii", "root", "snippet", "text")

    def __init__(self, snippet: str) -> None:
        self.snippet = snippet
        self.ascii = snippet.isascii()
        self.root = syntax.parse_toplevel(snippet).root
        # `text(node)`: node.text decoded, as the rest of the pass reads it; on ASCII text the
        # characters at the node's byte offsets, with no bytes object made
        self.text = _sliced(snippet) if self.ascii else _decoded

    def holds(self, node, names: frozenset[str]) -> bool:
        """One of `names` occurs in the node's text (the bytes test on text that is not ASCII,
        where characters and bytes part ways)."""
        if self.ascii:
            source = self.text(node)
            return any(name in source for name in names)
        source = node.text
        return any(name in source for name in _encoded(names))

    def calls(self, node, wanted: frozenset[str]) -> bool:
        """`node` calls one of `wanted` (anywhere inside it): a `call_expression` in its subtree
        whose function's text is one of them. On ASCII text the calls are looked for where the
        names occur (`_called_at`), not by a walk of the subtree (a loop body around a shuffle
        was walked whole); otherwise, and for an empty name, by the walk (`calls_walked`)."""
        if not self.holds(node, wanted):
            return False  # a call's function is part of the node's text: no name in it, no such call
        if not self.ascii or "" in wanted:
            return self.calls_walked(node, wanted)
        snippet, end = self.snippet, node.end_byte
        for name in wanted:
            at = snippet.find(name, node.start_byte, end)
            while at >= 0:
                if _called_at(node, at, at + len(name)):
                    return True
                at = snippet.find(name, at + 1, end)
        return False

    def calls_walked(self, node, wanted: frozenset[str]) -> bool:
        """`calls` by a walk of every node under `node` (the reference `calls` is tested against)."""
        text = self.text
        for n in walk(node):
            if n.type == "call_expression":
                fn = n.child_by_field_name("function")
                if fn is not None and text(fn) in wanted:
                    return True
        return False


def _called_at(node, start: int, end: int) -> bool:
    """Some `call_expression` in the subtree of `node` has a function spanning exactly bytes
    [start, end). Such a function is one of the nodes spanning exactly that range, which lie on
    one chain of parents above the deepest of them; the call is its parent, and must not be
    above `node`."""
    n = node.descendant_for_byte_range(start, end)
    while n is not None and n.start_byte == start and n.end_byte == end and n != node:
        parent = n.parent
        if parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == n:
            return True
        n = parent
    return False


def _sliced(snippet: str):
    return lambda node: snippet[node.start_byte:node.end_byte]


def _decoded(node) -> str:
    return node.text.decode("utf-8", "surrogateescape")


@lru_cache(maxsize=16)
def _encoded(names: frozenset[str]) -> tuple[bytes, ...]:
    """The names as the bytes `_decoded` decodes them from."""
    return tuple(name.encode("utf-8", "surrogateescape") for name in names)


def collect(root) -> dict[str, list]:
    """The nodes of each of `KINDS` under `root` (itself included), each list in document order
    (a parent before its children), as a query's captures list them. Each node is told by its
    symbol number (`kind_id`, an int) rather than its type's name, a new str a node: a fifth of
    the walk (`collect_by_type`, the reference, is tested against it)."""
    found: dict[str, list] = {kind: [] for kind in KINDS}
    wanted = _wanted_ids()
    cursor = root.walk()
    while True:
        node = cursor.node
        kind = wanted.get(node.kind_id)
        if kind is not None:
            found[kind].append(node)
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


@lru_cache(maxsize=1)
def _wanted_ids() -> dict[int, str]:
    """Every symbol number of the grammar whose name is one of `KINDS` (aliases give a name more
    than one), with that name: `node.kind_id` is the symbol whose name `node.type` is."""
    language = syntax.parser().language
    names = {i: language.node_kind_for_id(i) for i in range(language.node_kind_count)}
    return {i: name for i, name in names.items() if name in _WANTED}


def collect_by_type(root) -> dict[str, list]:
    """`collect` by each node's type name over `walk` (children lists, not a cursor): the
    reference it is tested against."""
    found: dict[str, list] = {kind: [] for kind in KINDS}
    for node in walk(root):
        if node.type in _WANTED:
            found[node.type].append(node)
    return found


def walk(node):
    """Every node under `node`, itself first, parents before children."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def identifiers_named(root, wanted: set[str], text):
    """The identifier nodes under `root` whose text is in `wanted`, found where the names occur
    in its bytes (the deepest node spanning an occurrence) rather than by a walk of every node,
    which made Python objects of the whole tree: a quarter of this pass. Order is not kept."""
    if "" in wanted:  # an empty (missing) name has no occurrence to look for: walk
        yield from (n for n in walk(root) if n.type == "identifier" and text(n) in wanted)
        return
    source, base = root.text, root.start_byte
    for name in wanted:
        token = name.encode("utf-8", "surrogateescape")
        at = source.find(token)
        while at >= 0:
            node = root.descendant_for_byte_range(base + at, base + at + len(token))
            if node is not None and node.type == "identifier" and node.start_byte == base + at \
                    and node.end_byte == base + at + len(token):
                yield node
            at = source.find(token, at + 1)


def offset_converter(snippet: str):
    """tree-sitter gives byte offsets; diagnostics need character offsets."""
    if snippet.isascii():
        return lambda b: b
    data = snippet.encode("utf-8", "surrogateescape")
    return lambda b: len(data[:b].decode("utf-8", "surrogateescape"))
