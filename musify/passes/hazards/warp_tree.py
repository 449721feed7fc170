"""The syntax-tree side of the warp-size pass: one device function parsed, the nodes its checks
read gathered in one walk, and node text cut from the function's own text.

warp_size.py says what counts as a warp-size hazard; this module only makes the tree cheap to
ask. Each `Node` that py-tree-sitter hands out is a new Python object and each `node.text` a new
bytes object to decode, and on the corpora most of the pass's time was these, not the parse:
so text is sliced from the snippet (the same characters where the snippet is ASCII, where byte
and character offsets agree), and the five node kinds the checks start from are collected by a
cursor walk that builds no child lists (a tree-sitter query does it in C, but compiling one costs
about 17 ms a process, more than the walks of a whole corpus). On ASCII text even that walk is
skipped: `candidates` goes straight to the few nodes a check can report on, from where the tagged
names, the numbers 31, 32 and 5, full masks and `for` occur in the text (`descendant_for_byte_range`
from each), and the walk is made only for a lane test that needs the function's declarations.
"""

from __future__ import annotations

import re
from functools import lru_cache

from musify.frontend import compiled, syntax
from musify.passes.hazards.common import int_value

# the node kinds the checks start from (tests/test_warp_tree.py: what a query for them captures)
KINDS = ("call_expression", "binary_expression", "init_declarator", "for_statement", "parameter_declaration")
_WANTED = frozenset(KINDS)
_NATIVE = compiled.load("_claunch")  # `literal_tokens` in one compiled pass (_claunch_warp.c), or None


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
        names occur (`_called_at`; all at once by `call_pattern` where they are plain names), not
        by a walk of the subtree (a loop body around a shuffle was walked whole); otherwise, and
        for an empty name, by the walk (`calls_walked`)."""
        if self.ascii and (pattern := call_pattern(wanted)) is not None:
            for m in pattern.finditer(self.snippet, node.start_byte, node.end_byte):
                if _called_at(node, m.start(), m.end()):
                    return True
            return False
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

    def calls_to(self, pattern: re.Pattern[str]) -> list[tuple[str, object]]:
        """Every call in the function whose function's text is a match of `pattern` (made by
        `call_pattern`), with that text, looked for where the names occur: ASCII text only."""
        root, out = self.root, []
        for m in pattern.finditer(self.snippet):
            call = call_at(root, m.start(), m.end())
            if call is not None:
                out.append((m.group(), call))
        return out

    def holds_literal(self, node, value: int) -> bool:
        """A `number_literal` under `node` has the value `value` (`int_value` of its text):
        looked for as `literals` does on ASCII text, by a walk otherwise (`holds_literal_walked`)."""
        if not self.ascii or not value:
            return self.holds_literal_walked(node, value)
        return bool(self.literals(frozenset((value,)), node))

    def holds_literal_walked(self, node, value: int) -> bool:
        """`holds_literal` by a walk of every node under `node` (the reference it is tested against)."""
        text = self.text
        return any(n.type == "number_literal" and int_value(text(n)) == value for n in walk(node))

    def literals(self, values: frozenset[int], within=None) -> list[tuple[int, object]]:
        """The integer literals in the function (ASCII text), or under the node `within`, whose
        value (`int_value` of their text) is one of `values` (0 is not looked for: its digit is
        everywhere), with it, in document order. A literal is looked for where a value's decimal
        digits or a hex prefix occur, read from its start (past leading zeros) by `_number`
        (`literal_tokens`), and kept if it is a whole `number_literal` node (not a comment's, a
        string's, a name's or a longer literal's digits): a regular expression for any number
        tried every character, and cost more than the walk it replaced."""
        snippet, root, out = self.snippet, self.root, []
        low, high = (0, len(snippet)) if within is None else (within.start_byte, within.end_byte)
        number = _kind_ids("number_literal")
        for start, end, value in literal_tokens(snippet, low, high, values):
            node = root.descendant_for_byte_range(start, end)
            if node.kind_id in number and node.start_byte == start and node.end_byte == end:
                out.append((value, node))
        return out


def literal_tokens(snippet: str, low: int, high: int, values: frozenset[int]) -> list[tuple[int, int, int]]:
    """(start, end, value) of each integer literal `Function.literals` looks at in snippet[low:high]
    (a spelling of a value wholly in it), with one of `values`, in order: `_claunch.warp_literals`
    where it was built and the snippet is ASCII (one pass in C: the finds, the set of starts, a
    match and an `int` a start were a fifth of the checks), else `literal_tokens_python`; the
    same answers, tests/test_prefilters.py."""
    if _NATIVE is not None:
        found = _NATIVE.warp_literals(snippet, low, high, _spellings(values), _value_tuple(values))
        if found is not None:
            return found
    return literal_tokens_python(snippet, low, high, values)


def literal_tokens_python(snippet: str, low: int, high: int, values: frozenset[int]) -> list[tuple[int, int, int]]:
    """`literal_tokens` in Python, the reference: every spelling found (`str.find`) in
    snippet[low:high], walked back over leading zeros to where the literal starts, kept if no
    name's character comes just before, and read from there by `_number`."""
    starts = set()
    for digits in _spellings(values):
        at = snippet.find(digits, low, high)
        while at >= 0:
            start = at
            while start and snippet[start - 1] == "0":
                start -= 1
            if not start or snippet[start - 1] not in WORD_CHARS:  # not a name's digits
                starts.add(start)
            at = snippet.find(digits, at + 1, high)
    match = _number().match
    out = []
    for start in sorted(starts):
        m = match(snippet, start)
        if m is None:
            continue
        hexa, decimal = m.groups()
        value = int(hexa, 16) if hexa is not None else int(decimal)
        if value in values:
            out.append((start, m.end(), value))
    return out


WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


@lru_cache(maxsize=1)
def _number() -> re.Pattern[str]:
    """An integer literal as `int_value` reads one, where a token can start and end (a digit
    after a letter, a digit or a '.' belongs to a name or another literal, as it does for the
    lexer). Compiled when first asked: most runs parse no function."""
    return re.compile(r"(?<!\w)(?:0[xX]([0-9a-fA-F]+)|(\d+))[uUlL]*(?![\w.])")


@lru_cache(maxsize=4)
def _spellings(values: frozenset[int]) -> tuple[str, ...]:
    """What every spelling of one of `values` (but 0) holds: its decimal digits, or a hex prefix."""
    return (*(str(value) for value in values if value), "0x", "0X")


@lru_cache(maxsize=4)
def _value_tuple(values: frozenset[int]) -> tuple[int, ...]:
    """`values` as the compiled `warp_literals` takes them."""
    return tuple(values)


@lru_cache(maxsize=16)
def call_pattern(names: frozenset[str]) -> re.Pattern[str] | None:
    """The names, each ending a word, for `Function.calls_to`; None where one is not a plain
    ASCII identifier (the word's end would not bound it: such names are looked for by a walk)."""
    if not names or not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) for name in names):
        return None
    spelled = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    # no look-behind for the start: it made the search try every character; a name's match
    # inside a longer word is not a call's function (`call_at` finds none)
    return re.compile(rf"(?:{spelled})(?!\w)")


def _called_at(node, start: int, end: int) -> bool:
    """Some `call_expression` in the subtree of `node` has a function spanning exactly bytes
    [start, end) (`call_at`)."""
    return call_at(node, start, end) is not None


def call_at(node, start: int, end: int):
    """The `call_expression` in the subtree of `node` whose function spans exactly bytes
    [start, end), or None. Such a call is the smallest node under `node` spanning [start, end + 1):
    its arguments start after the function (with a '('), and nothing under the function reaches
    past it. One search down the tree, where going up from the function (`node.parent` searches
    down from the root each time) cost several."""
    call = node.descendant_for_byte_range(start, end + 1)
    if call is None or call.kind_id not in _kind_ids("call_expression") or call.start_byte != start:
        return None
    fn = call.child_by_field_name("function")
    return call if fn is not None and fn.end_byte == end else None


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
    return {i: name for i, name in _kind_names().items() if name in _WANTED}


@lru_cache(maxsize=16)
def _kind_ids(name: str) -> frozenset[int]:
    """Every symbol number whose name is `name` (see `_wanted_ids`)."""
    return frozenset(i for i, kind in _kind_names().items() if kind == name)


@lru_cache(maxsize=1)
def _kind_names() -> dict[int, str]:
    language = syntax.parser().language
    return {i: language.node_kind_for_id(i) for i in range(language.node_kind_count)}


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


FULL_MASK = 0xFFFFFFFF
# the values of the literals a binary expression or a declaration is reported for: 31, 32 and 5
# beside the operator, a full mask on a side or as the value (`~0` is looked for at its '~')
_VALUES = frozenset({31, 32, 5, FULL_MASK})


def candidates(tree: Function, pattern: re.Pattern[str], names) -> dict[str, list]:
    """The nodes the warp-size checks can report on, by kind as `collect` gives them (but no
    parameters, and in no set order), found on ASCII text where what each report needs occurs,
    not by a walk that made a Python object of every node: a call of a name `pattern` matches
    (`call_pattern` of the tagged `names`: the checked calls, and the lane-mask results that make
    each declaration whose value holds one a site); a 31, 32 or 5 beside a binary operator; a
    full mask (a literal or `~0`, in parentheses or not) on a side of a binary expression or as a
    declaration's value; the `for` keyword before a shuffle (which the loop's body may hold)."""
    found: dict[str, dict] = {"call_expression": {}, "binary_expression": {}, "init_declarator": {}}
    calls, binaries, inits = found.values()
    shuffles = []
    for name, call in tree.calls_to(pattern):
        if name in names.mask_arg or name in names.popcount or name in names.shuffle:
            calls[call.start_byte, call.end_byte] = call
        if name in names.shuffle:
            shuffles.append(call.start_byte)
        if name in names.mask_result:  # the declarations this call is (part of) the value of
            init = _kind_ids("init_declarator")
            up = call.parent
            while up is not None:
                if up.kind_id in init:
                    inits[up.start_byte, up.end_byte] = up
                up = up.parent
    snippet, root, text = tree.snippet, tree.root, tree.text
    masks = []  # the full masks: literals, and `~0`s (looked for at each '~')
    for value, node in tree.literals(_VALUES):
        if value == FULL_MASK:
            masks.append(node)
        else:  # a 31, 32 or 5 beside the operator
            up = node.parent
            if up is not None and up.type == "binary_expression":
                binaries[up.start_byte, up.end_byte] = up
                if value == 32 and is_32_minus_1(up, text):  # `x & (32 - 1)`: the expression it is 31 in
                    while up.parent is not None and up.parent.type == "parenthesized_expression":
                        up = up.parent
                    up = up.parent
                    if up is not None and up.type == "binary_expression":
                        binaries[up.start_byte, up.end_byte] = up
    at = snippet.find("~")
    while at >= 0:
        up = root.descendant_for_byte_range(at, at + 1).parent
        if up is not None and up.start_byte == at and is_full_mask(up, text):
            masks.append(up)
        at = snippet.find("~", at + 1)
    for node in masks:
        up = node.parent
        while up is not None and up.type == "parenthesized_expression":
            up = up.parent
        if up is not None and up.type in ("binary_expression", "init_declarator"):
            found[up.type][up.start_byte, up.end_byte] = up
    loops = []
    # a `for` before some shuffle: one starting before the last (none without a shuffle)
    last = max(shuffles, default=0)
    at = snippet.find("for", 0, last + 2)
    while at >= 0:
        if snippet[at + 3:at + 4] not in WORD_CHARS:
            up = root.descendant_for_byte_range(at, at + 3).parent
            if up is not None and up.start_byte == at and up.type == "for_statement":
                loops.append(up)
        at = snippet.find("for", at + 1, last + 2)
    return {**{kind: list(nodes.values()) for kind, nodes in found.items()}, "for_statement": loops}


def operand_value(node, text) -> int | None:
    """The value of a binary expression's operand as the warp-size checks read it: a literal
    (`int_value`), or the lane-mask idiom `32 - 1` (in parentheses or not), which is 31: `& (W - 1)`
    with the warp size spelled 32, as torch_scatter's `row_idx & (32 - 1)` computes a lane."""
    value = int_value(text(node))
    if value is None and is_32_minus_1(node, text):
        return 31
    return value


def is_32_minus_1(node, text) -> bool:
    """The node is `32 - 1`, in parentheses or not (32 as `int_value` reads it: `0x20`, `32u`)."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type != "binary_expression":
        return False
    op, left, right = (node.child_by_field_name(f) for f in ("operator", "left", "right"))
    return op is not None and left is not None and right is not None and text(op) == "-" \
        and int_value(text(left)) == 32 and int_value(text(right)) == 1


def is_full_mask(node, text) -> bool:
    """The node is the full 32-bit lane mask: 0xFFFFFFFF (as `int_value` reads it) or `~0`, in
    parentheses or not."""
    if node.type == "number_literal":
        return int_value(text(node)) == FULL_MASK
    if node.type == "unary_expression":
        op, arg = node.child_by_field_name("operator"), node.child_by_field_name("argument")
        return op is not None and arg is not None and text(op) == "~" and int_value(text(arg)) == 0
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return is_full_mask(node.named_children[0], text)
    return False
