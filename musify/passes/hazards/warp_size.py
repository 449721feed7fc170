"""Warp-size hazards: code that hard-codes 32-lane warps, found on the syntax tree.

A warp has 128 lanes on mp_21/mp_22 and 32 on mp_31. Only the bodies of device functions that
contain a trigger (a full mask, 31, 32, `>> 5`, a shuffle or a lane-mask result) are parsed, so a
`32` in host code costs nothing and raises nothing. On the tree a 32 counts only where it means
"a warp": lane/warp arithmetic on a thread index, a shuffle width, a shuffle offset loop, a
first-warp test, a warp-size comparison, and a lane mask the code treats as 32 bits wide (kept in
a 32-bit integer, counted with a 32-bit popcount, compared with the full 32-bit mask). A full
32-bit mask passed to a `*_sync` call is only a note: MUSA accepts it for the whole warp.

Which calls are shuffles, take or return lane masks, or count bits is the rules' `hazard` tags;
this module never spells an intrinsic. Findings are grouped: one diagnostic per cause (ID) per
function, at its first site, with every other site in the diagnostic's `sites`.

`__shared__ T x[32]` indexed by a warp id is deliberately not reported: wider warps mean fewer
warps per block, so 32 slots still suffice (corpora/warp32_only says the same); the lane-indexed
reads of such arrays sit behind a first-warp test, which is reported.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from operator import is_

from musify.arch import WARP_WIDTH
from musify.engine.edits import Edit
from musify.frontend import syntax
from musify.passes._base import PassContext
from musify.passes.hazards.common import DeviceFunction, int_value, warp_severity
from musify.passes.hazards.file_facts import device_functions_of

# Only text that some check below can report: full masks, 31/32, `>> 5`; 16 (an offset loop or a
# shuffle offset) only where the body shuffles; a lane-mask result anywhere. A body that merely
# uses warpSize or shuffles with computed offsets is warp-size agnostic and is not parsed at all.
_TRIGGER = re.compile(r"0[xX][fF]{8}|~\s*0|(?<![\w.])3[12](?![\w.])|>>\s*5(?!\w)")
_SIXTEEN = re.compile(r"(?<![\w.])16(?![\w.])")
# the same searches as the engine runs them fast: each alternative on its own, a literal first
# (the alternation above, opening with a look-behind, tried all four at every offset: 300 us on a
# 3 KB body), and the look-behind checked at each candidate (`_standalone`)
_TRIGGER_LITERAL = (re.compile(r"0[xX][fF]{8}"), re.compile(r"~\s*0"), re.compile(r">>\s*5(?!\w)"))
_THIRTY_ONE_OR_TWO = re.compile(r"3[12](?![\w.])")
_SIXTEEN_AHEAD = re.compile(r"16(?![\w.])")
_THREAD_NAME = re.compile(r"(?i)(tid|tx|ltid|lane\w*|\w*_lane|thread_?id\w*|thread_?idx|local_?id|warp_?id\w*)")
_INTEGRAL = re.compile(r"\b(int|unsigned|long|short|size_t|uint32_t|int32_t|uint64_t|int64_t|auto|char)\b")
# integer types exactly 32 bits wide on every MUSA and CUDA target
_INT32 = re.compile(r"^(?:const\s+)?(?:unsigned|signed|unsigned\s+int|signed\s+int|int|uint32_t|int32_t|"
                    r"std::uint32_t|std::int32_t|unsigned\s+long|long)(?:\s+const)?$")
FULL_MASK = 0xFFFFFFFF
# (operator, literal) pairs that take a lane or a warp number from a thread index, and what to
# write instead, with W the name the rules tag `warp-size`
_LANE_ARITH = {("&", 31): "% W (or & (W - 1))", ("%", 32): "% W", (">>", 5): "/ W", ("/", 32): "/ W"}


@dataclass(frozen=True)
class _Names:
    """The names the rules tag for this pass (`hazard:` in rules/)."""

    mask_arg: frozenset[str]
    mask_result: frozenset[str]
    shuffle: frozenset[str]
    shuffle_offset: frozenset[str]
    popcount: frozenset[str]
    warp_size: frozenset[str]
    thread_index: frozenset[str]


_TAGS = ("lane-mask-arg", "lane-mask-result", "shuffle", "shuffle-offset", "popcount", "warp-size", "thread-index")


def _names(ctx: PassContext) -> _Names:
    return _names_of(ctx.ruleset)


def _names_of(ruleset) -> _Names:
    """Made again only when the rule set's tagged names changed (kept on it, as the identifier
    pass keeps its fast renames; adding a rule replaces a tag's set, which the check sees)."""
    sets = tuple(map(ruleset.tagged, _TAGS))
    made = getattr(ruleset, "_warp_names", None)
    if made is None or not all(map(is_, made[0], sets)):
        made = ruleset._warp_names = (sets, _Names(*sets))
    return made[1]


def run(ctx: PassContext) -> list[Edit]:
    functions = device_functions_of(ctx)
    if not functions:
        return []
    names = _names(ctx)
    text = ctx.text
    shuffles = [i.start for i in ctx.scan.idents.select(names.shuffle)]
    results = [i.start for i in ctx.scan.idents.select(names.mask_result)]
    for fn in functions:
        if (has_trigger(text, fn.body_start, fn.end) or _any_in(results, fn) or (
                _any_in(shuffles, fn) and _standalone(_SIXTEEN_AHEAD, text, fn.body_start, fn.end))) \
                and may_report(snippet := text[fn.start:fn.end], names):
            _check_function(ctx, fn, names, snippet)
    return []


_FFFFFFFF = re.compile(r"[fF]{8}")
_HEX_1F = re.compile(r"1[fF]")


def may_report(snippet: str, names: _Names) -> bool:
    """False only where `_check_function` on `snippet` (a function, qualifiers to '}') could
    report nothing, so its parse is skipped: every diagnostic below needs certain names and
    numbers in the function's text, and this asks whether they are there at all. A number's
    value is read from its spelling (decimal or hex, leading zeros, suffixes: 32 is spelled with
    "32" or "20", 31 with "31" or "1f"), so a snippet that is not all ASCII (other digits that
    `int_value` reads) is always parsed. On a corpus of small files a quarter of the functions
    with a trigger (a `32` that is a tile size, say) were parsed for nothing.
    tests/test_warp_size_precheck.py checks the claim against `_check_function`."""
    if not snippet.isascii():
        return True

    def named(wanted: frozenset[str]) -> bool:
        return any(name in snippet for name in wanted)

    if named(names.mask_result):  # MU2041: a lane mask kept, counted or compared needs its source
        return True
    n32 = "32" in snippet or "20" in snippet
    if named(names.shuffle) and (n32 or "16" in snippet or "10" in snippet):
        return True  # MU2022 (a width of 32), MU2023 (an offset of 16, an offset loop from 16 or to 32)
    if n32 and named(names.warp_size):
        return True  # MU2025
    full = "~" in snippet or "4294967295" in snippet or _FFFFFFFF.search(snippet) is not None
    if full and (named(names.mask_arg) or "mask" in snippet.lower()):
        return True  # MU2020: a full mask passed to a mask argument or kept in a mask variable
    lane_numbers = n32 or "31" in snippet or _HEX_1F.search(snippet) is not None or (
        ">>" in snippet and "5" in snippet)
    # MU2021, MU2024: arithmetic or a comparison on a thread expression, which needs a thread
    # index or a tid-like name (every variable derived from one starts from one of them)
    return lane_numbers and (named(names.thread_index) or _THREAD_NAME.search(snippet) is not None)


def has_trigger(text: str, start: int, end: int) -> bool:
    """`_TRIGGER.search(text, start, end)` finds something."""
    return any(p.search(text, start, end) for p in _TRIGGER_LITERAL) or \
        _standalone(_THIRTY_ONE_OR_TWO, text, start, end)


def _standalone(pattern: re.Pattern[str], text: str, start: int, end: int) -> bool:
    r"""`pattern` matches in text[start:end] where no word character or '.' comes just before (the
    look-behind `(?<![\w.])`, which may look before `start`, as the regex's does)."""
    m = pattern.search(text, start, end)
    while m is not None:
        at = m.start()
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_."):
            return True
        m = pattern.search(text, at + 1, end)
    return False


def _any_in(offsets: list[int], fn: DeviceFunction) -> bool:
    """Some offset lies inside the body of `fn` (offsets are sorted)."""
    i = bisect.bisect_left(offsets, fn.body_start)
    return i < len(offsets) and offsets[i] < fn.end


def _check_function(ctx: PassContext, fn: DeviceFunction, names: _Names, snippet: str | None = None) -> None:
    if snippet is None:
        snippet = ctx.text[fn.start:fn.end]
    tree = syntax.parse_toplevel(snippet)
    to_char = _offset_converter(snippet)
    arch = ctx.options.arch
    common = {"arch": arch, "width": WARP_WIDTH.get(arch, 128), "func": fn.name}
    severity = warp_severity(arch)
    found: dict[str, list[tuple[int, object, dict]]] = {}

    def report(node, diag: str, **args) -> None:
        offset = fn.start + to_char(node.start_byte)
        sites = found.setdefault(diag, [])
        if all(offset != at for at, _, _ in sites):
            sites.append((offset, node, args))

    captures = _query_nodes(tree.root)
    derived = _thread_variables(captures, names)
    masks = _mask_variables(captures, names)
    bit_used = _used_as_bits(tree.root, masks, names) if masks else set()
    full = _full_mask_variables(captures)
    carried = _passed_on(tree.root, full) if full else set()
    nodes = sorted((n for kind in ("call", "bin", "init", "for") for n in captures.get(kind, ())),
                   key=lambda n: (n.start_byte, -n.end_byte))
    for node in nodes:
        kind = node.type
        if kind == "call_expression":
            _check_call(node, names, masks, report)
        elif kind == "binary_expression":
            _check_binary(node, names, derived, masks, report)
        elif kind == "init_declarator":
            _check_init(node, names, bit_used, carried, report)
        elif kind == "for_statement" and _is_warp_offset_loop(node, names):
            header = _text(node).split(")", 1)[0] + ")"
            report(node, "MU2023", expr=" ".join(header.split()))
    for diag, sites in sorted(found.items(), key=lambda kv: kv[1][0][0]):
        offset, node, args = sites[0]
        where = tuple(ctx.lines.position(at) for at, _, _ in sites[1:])
        level = "note" if diag == "MU2020" else severity
        ctx.warn(diag, offset, _text(node), level, end=offset + len(_text(node)), origin="pass:warp_size",
                 sites=where, **{**common, "count": len(sites), **args})


def _check_init(node, names: _Names, bit_used: set[str], carried: set[str], report) -> None:
    name, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
    if name is None or value is None:
        return
    if "mask" in _text(name).lower() and _is_full_mask(value):
        if _text(name) in carried:
            report(value, "MU2020", expr=_text(value), call=f"the lane mask {_text(name)}")
        return
    if bit_used and _text(name) in bit_used and _calls(value, names.mask_result):
        decl = node.parent
        type_node = decl.child_by_field_name("type") if decl is not None else None
        if type_node is not None and _INT32.match(" ".join(_text(type_node).split())):
            report(value, "MU2041", expr=" ".join(_text(node).split()),
                   how=f"kept in a 32-bit '{' '.join(_text(type_node).split())}' and used as lane bits")


def _check_call(node, names: _Names, masks: set[str], report) -> None:
    fn = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    if fn is None or args is None:
        return
    name = _text(fn)
    if name not in names.mask_arg and name not in names.popcount and name not in names.shuffle:
        return  # every check below asks for one of these
    values = [c for c in args.named_children if c.type != "comment"]
    if name in names.mask_arg and values and _is_full_mask(values[0]):
        report(values[0], "MU2020", expr=_text(values[0]), call=f"{name}()")
    if name in names.popcount and values and (_calls(values[0], names.mask_result) or _text(values[0]) in masks):
        report(node, "MU2041", expr=" ".join(_text(node).split()), how=f"counted with {name}()")
    if name in names.shuffle:
        width_at = 3 if name in names.mask_arg else 2
        if len(values) > width_at and int_value(_text(values[width_at])) == 32:
            report(values[width_at], "MU2022", call=name)
        offset_at = width_at - 1
        if name in names.shuffle_offset and len(values) > offset_at and int_value(_text(values[offset_at])) == 16:
            report(values[offset_at], "MU2023", expr=f"{name}(..., 16)")


def _check_binary(node, names: _Names, derived: set[str], masks: set[str], report) -> None:
    op = node.child_by_field_name("operator")
    if op is None:
        return
    op_text = _text(op)
    if op_text not in _CHECKED_OPS:
        return  # `+`, `*`, `&&`, ...: no check below looks at them (operands not read)
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None:
        return
    left_text, right_text = _text(left), _text(right)
    lval, rval = int_value(left_text), int_value(right_text)
    if op_text in ("==", "!="):
        for mask_side, other in ((left, right), (right, left)):
            if _is_full_mask(other) and (_text(mask_side) in masks or _calls(mask_side, names.mask_result)):
                report(node, "MU2041", expr=_expr(node), how="compared with the full 32-bit mask")
                return
    if (left_text in names.warp_size or right_text in names.warp_size) and 32 in (lval, rval) \
            and op_text in _COMPARISONS:
        report(node, "MU2025", expr=_expr(node))
        return
    fix = _LANE_ARITH.get((op_text, rval))
    if fix is not None and _is_thread_expr(left, derived, names):
        report(node, "MU2021", expr=_expr(node),
               fix=fix.replace("W", min(names.warp_size, default="the warp size")))
    elif (op_text, rval) in (("<", 32), ("<=", 31), (">=", 32), (">", 31)) and _is_thread_expr(left, derived, names):
        report(node, "MU2024", expr=_expr(node))


def _expr(node) -> str:
    """The node's text on one line, as a diagnostic shows it (made only for what is reported)."""
    return " ".join(_text(node).split())


def _calls(node, wanted: frozenset[str]) -> bool:
    """`node` calls one of `wanted` (anywhere inside it)."""
    source = node.text
    if not any(name in source for name in _encoded(wanted)):
        return False  # a call's function is part of the node's bytes: no name in them, no such call
    for n in _walk(node):
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is not None and _text(fn) in wanted:
                return True
    return False


@lru_cache(maxsize=16)
def _encoded(names: frozenset[str]) -> tuple[bytes, ...]:
    """The names as the bytes `_text` decodes them from."""
    return tuple(name.encode("utf-8", "surrogateescape") for name in names)


_COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">="})
# every operator `_check_binary` can report on: the comparisons and the lane arithmetic's
_CHECKED_OPS = _COMPARISONS | {op for op, _ in _LANE_ARITH}


def _is_warp_offset_loop(node, names: _Names) -> bool:
    """`for (o = 16; o > 0; o >>= 1)` or `for (o = 1; o < 32; o <<= 1)` around a shuffle."""
    init = node.child_by_field_name("initializer")
    cond = node.child_by_field_name("condition")
    body = node.child_by_field_name("body")
    if init is None or cond is None or body is None or not _calls(body, names.shuffle):
        return False
    init_values = {int_value(_text(n)) for n in _walk(init) if n.type == "number_literal"}
    cond_values = {int_value(_text(n)) for n in _walk(cond) if n.type == "number_literal"}
    return 16 in init_values or 32 in cond_values


_QUERY = "(call_expression) @call (binary_expression) @bin (init_declarator) @init " \
         "(for_statement) @for (parameter_declaration) @param"


def _query_nodes(root) -> dict[str, list]:
    """The node kinds this pass looks at, collected by a tree-sitter query (in C, not a Python walk)."""
    return syntax.captures(root, _QUERY)


def _mask_variables(captures: dict[str, list], names: _Names) -> set[str]:
    """Variables initialised from a lane-mask result (`m = __ballot_sync(...)`), whatever their type."""
    out = set()
    for node in captures.get("init", ()):
        name, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
        if name is not None and value is not None and _calls(value, names.mask_result):
            out.add(_text(name))
    return out


def _full_mask_variables(captures: dict[str, list]) -> set[str]:
    """Variables named like a mask and initialised with the full 32-bit mask (MU2020's candidates)."""
    out = set()
    for node in captures.get("init", ()):
        name, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
        if name is not None and value is not None and "mask" in _text(name).lower() and _is_full_mask(value):
            out.add(_text(name))
    return out


_WRAPPERS = frozenset({"parenthesized_expression", "cast_expression"})


def _passed_on(root, wanted: set[str]) -> set[str]:
    """The variables of `wanted` passed to a call (as an argument, or `&`/`|`-combined into one)
    or returned as they are: only then can a value be a lane mask. A full 32-bit constant that
    is only computed with (nvshmem's `const uint64_t mask_4_bytes = 0x00000000ffffffff;` then
    `low = v & mask_4_bytes;`) is a byte mask, and a note that MUSA reads it as the whole warp
    would be wrong."""
    out = set()
    for n in _identifiers_named(root, wanted):
        name = _text(n)
        if name in out:
            continue
        parent = _above(n)
        if parent is not None and parent.type == "binary_expression" and \
                _text(parent.child_by_field_name("operator")) in ("&", "|"):
            parent = _above(parent)
            if parent is not None and parent.type == "argument_list":
                out.add(name)
        elif parent is not None and parent.type in ("argument_list", "return_statement"):
            out.add(name)
    return out


def _above(node):
    """The node's parent, past parentheses and casts."""
    parent = node.parent
    while parent is not None and parent.type in _WRAPPERS:
        parent = parent.parent
    return parent


def _used_as_bits(root, masks: set[str], names: _Names) -> set[str]:
    """The mask variables the code reads as bits: any use but passing the mask on as a call
    argument (to a `*_sync` call or a helper), which is how warp-agnostic code carries it."""
    out = set()
    for n in _identifiers_named(root, masks):
        if _text(n) in out:
            continue
        parent = n.parent
        if parent is None or parent.type in ("init_declarator", "declaration"):
            continue
        if parent.type == "argument_list":
            call = parent.parent
            fn = call.child_by_field_name("function") if call is not None else None
            if fn is None or _text(fn) not in names.popcount:
                continue
        out.add(_text(n))
    return out


def _identifiers_named(root, wanted: set[str]):
    """The identifier nodes under `root` whose text is in `wanted`, found where the names occur
    in its bytes (the deepest node spanning an occurrence) rather than by a walk of every node,
    which made Python objects of the whole tree: a quarter of this pass. Order is not kept."""
    if "" in wanted:  # an empty (missing) name has no occurrence to look for: walk
        yield from (n for n in _walk(root) if n.type == "identifier" and _text(n) in wanted)
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


def _thread_variables(captures: dict[str, list], names: _Names) -> set[str]:
    """Integer variables computed from a thread index or block size (or from each other), plus
    tid-like names."""
    decls = []
    derived: set[str] = set()
    for node in list(captures.get("init", ())) + list(captures.get("param", ())):
        if node.type == "init_declarator":
            decl = node.parent
            type_node = decl.child_by_field_name("type") if decl is not None else None
            if type_node is None or not _INTEGRAL.search(_text(type_node)):
                continue
            name, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
            if name is not None and value is not None:
                decls.append((_text(name), _text(value)))
        elif node.type in ("parameter_declaration",):
            name = node.child_by_field_name("declarator")
            if name is not None and _THREAD_NAME.fullmatch(_text(name)):
                derived.add(_text(name))
    for _ in range(3):  # a short chain (tid -> lane -> ...) is enough
        for name, value in decls:
            if name not in derived and (_mentions(value, names.thread_index) or _mentions(value, derived)):
                derived.add(name)
    return derived


def _mentions(value: str, names) -> bool:
    return any(_word(n).search(value) for n in names if n in value)


@lru_cache(maxsize=4096)
def _word(name: str) -> re.Pattern[str]:
    """`name` as a whole word (compiled once: `re.search` with a new string looked it up per call)."""
    return re.compile(rf"\b{re.escape(name)}\b")


def _is_thread_expr(node, derived: set[str], names: _Names) -> bool:
    for n in _walk(node):
        if n.type == "identifier":
            t = _text(n)
            if t in names.thread_index or t in derived or _THREAD_NAME.fullmatch(t):
                return True
    return False


def _is_full_mask(node) -> bool:
    if node.type == "number_literal":
        return int_value(_text(node)) == FULL_MASK
    if node.type == "unary_expression":
        op, arg = node.child_by_field_name("operator"), node.child_by_field_name("argument")
        return op is not None and arg is not None and _text(op) == "~" and int_value(_text(arg)) == 0
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _is_full_mask(node.named_children[0])
    return False


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _text(node) -> str:
    return node.text.decode("utf-8", "surrogateescape")


def _offset_converter(snippet: str):
    """tree-sitter gives byte offsets; diagnostics need character offsets."""
    if snippet.isascii():
        return lambda b: b
    data = snippet.encode("utf-8", "surrogateescape")
    return lambda b: len(data[:b].decode("utf-8", "surrogateescape"))
