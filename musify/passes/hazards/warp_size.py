"""Warp-size hazards: code that hard-codes 32-lane warps, found on the syntax tree.

A warp has 128 lanes on mp_21/mp_22 and 32 on mp_31 (MUSA_FACTS section 2). Only the bodies of
`__global__`/`__device__` functions that contain a trigger (a full mask, 31, 32, `>> 5`, `warpSize`,
a shuffle) are parsed, so a `32` in host code costs nothing and raises nothing. On the tree a 32
counts only where it means "a warp": a mask argument of a `*_sync` call, lane/warp arithmetic on a
thread index, a shuffle width, a shuffle offset loop, a first-warp test, `warpSize == 32`.

`__shared__ T x[32]` indexed by a warp id is deliberately not reported: wider warps mean fewer
warps per block, so 32 slots still suffice (corpora/warp32_only says the same); the lane-indexed
reads of such arrays sit behind a first-warp test, which is reported.
"""

from __future__ import annotations

import re

from musify.arch import WARP_WIDTH
from musify.engine.edits import Edit
from musify.frontend import syntax
from musify.passes._base import PassContext
from musify.passes.hazards.common import DeviceFunction, int_value, warp_severity
from musify.passes.hazards.file_facts import device_functions_of

# Only text that some check below can report: full masks, 31/32, `>> 5`; and 16 (an offset loop or
# a shuffle offset) only where the body shuffles. A body that merely uses warpSize or shuffles
# with computed offsets is warp-size agnostic and is not parsed at all.
_TRIGGER = re.compile(r"0[xX][fF]{8}|~\s*0|(?<![\w.])3[12](?![\w.])|>>\s*5(?!\w)")
_SIXTEEN = re.compile(r"(?<![\w.])16(?![\w.])")
_SYNC_CALL = re.compile(r"__\w+_sync|__syncwarp")
_THREAD_NAME = re.compile(r"(?i)(tid|tx|ltid|lane\w*|\w*_lane|thread_?id\w*|thread_?idx|local_?id|warp_?id\w*)")
_THREAD_BUILTIN = re.compile(r"\b(threadIdx|blockDim)\b")
_INTEGRAL = re.compile(r"\b(int|unsigned|long|short|size_t|uint32_t|int32_t|uint64_t|int64_t|auto|char)\b")
FULL_MASK = 0xFFFFFFFF
# (operator, literal) pairs that take a lane or a warp number from a thread index, and what to write
_LANE_ARITH = {("&", 31): "% warpSize (or & (warpSize - 1))", ("%", 32): "% warpSize",
               (">>", 5): "/ warpSize", ("/", 32): "/ warpSize"}


def run(ctx: PassContext) -> list[Edit]:
    text = ctx.text
    for fn in device_functions_of(ctx):
        if _TRIGGER.search(text, fn.body_start, fn.end) or (
                _SIXTEEN.search(text, fn.body_start, fn.end) and text.find("__shfl", fn.body_start, fn.end) >= 0):
            _check_function(ctx, fn)
    return []


def _check_function(ctx: PassContext, fn: DeviceFunction) -> None:
    snippet = ctx.text[fn.start:fn.end]
    tree = syntax.parse_toplevel(snippet)
    to_char = _offset_converter(snippet)
    arch = ctx.options.arch
    common = {"arch": arch, "width": WARP_WIDTH.get(arch, 128), "func": fn.name}
    severity = warp_severity(arch)
    seen: set[tuple[int, str]] = set()

    def report(node, diag: str, **args) -> None:
        offset = fn.start + to_char(node.start_byte)
        if (offset, diag) in seen:
            return
        seen.add((offset, diag))
        ctx.warn(diag, offset, _text(node), severity, **{**common, **args})

    captures = _query_nodes(tree.root)
    derived = _thread_variables(captures)
    nodes = sorted((n for kind in ("call", "bin", "init", "for") for n in captures.get(kind, ())),
                   key=lambda n: (n.start_byte, -n.end_byte))
    for node in nodes:
        kind = node.type
        if kind == "call_expression":
            _check_call(node, report)
        elif kind == "binary_expression":
            _check_binary(node, derived, report)
        elif kind == "init_declarator":
            name, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
            if name is not None and value is not None and "mask" in _text(name).lower() and _is_full_mask(value):
                report(value, "MU2020", expr=_text(value))
        elif kind == "for_statement" and _is_warp_offset_loop(node):
            header = _text(node).split(")", 1)[0] + ")"
            report(node, "MU2023", expr=" ".join(header.split()))


def _check_call(node, report) -> None:
    fn = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    if fn is None or args is None:
        return
    name = _text(fn)
    values = [c for c in args.named_children if c.type != "comment"]
    if _SYNC_CALL.fullmatch(name) and values and _is_full_mask(values[0]):
        report(values[0], "MU2020", expr=_text(values[0]), func=name)
    if name.startswith("__shfl"):
        width_at = 3 if name.endswith("_sync") else 2
        if len(values) > width_at and int_value(_text(values[width_at])) == 32:
            report(values[width_at], "MU2022", func=name)
        offset_at = width_at - 1
        if ("down" in name or "xor" in name) and len(values) > offset_at \
                and int_value(_text(values[offset_at])) == 16:
            report(values[offset_at], "MU2023", expr=f"{name}(..., 16)")


def _check_binary(node, derived: set[str], report) -> None:
    op = node.child_by_field_name("operator")
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op is None or left is None or right is None:
        return
    op_text = _text(op)
    lval, rval = int_value(_text(left)), int_value(_text(right))
    expr = " ".join(_text(node).split())
    if "warpSize" in (_text(left), _text(right)) and 32 in (lval, rval) and op_text in _COMPARISONS:
        report(node, "MU2025", expr=expr)
        return
    fix = _LANE_ARITH.get((op_text, rval))
    if fix is not None and _is_thread_expr(left, derived):
        report(node, "MU2021", expr=expr, fix=fix)
    elif (op_text, rval) in (("<", 32), ("<=", 31), (">=", 32), (">", 31)) and _is_thread_expr(left, derived):
        report(node, "MU2024", expr=expr)


_COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">="})


def _is_warp_offset_loop(node) -> bool:
    """`for (o = 16; o > 0; o >>= 1)` or `for (o = 1; o < 32; o <<= 1)` around a shuffle."""
    init = node.child_by_field_name("initializer")
    cond = node.child_by_field_name("condition")
    body = node.child_by_field_name("body")
    if init is None or cond is None or body is None or "__shfl" not in _text(body):
        return False
    init_values = {int_value(_text(n)) for n in _walk(init) if n.type == "number_literal"}
    cond_values = {int_value(_text(n)) for n in _walk(cond) if n.type == "number_literal"}
    return 16 in init_values or 32 in cond_values


_QUERY = "(call_expression) @call (binary_expression) @bin (init_declarator) @init " \
         "(for_statement) @for (parameter_declaration) @param"


def _query_nodes(root) -> dict[str, list]:
    """The node kinds this pass looks at, collected by a tree-sitter query (in C, not a Python walk)."""
    return syntax.captures(root, _QUERY)


def _thread_variables(captures: dict[str, list]) -> set[str]:
    """Integer variables computed from threadIdx/blockDim (or from each other), plus tid-like names."""
    decls = []
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
                decls.append((_text(name), "threadIdx"))
    derived: set[str] = set()
    for _ in range(3):  # a short chain (tid -> lane -> ...) is enough
        for name, value in decls:
            if name not in derived and (_THREAD_BUILTIN.search(value) or _mentions(value, derived)):
                derived.add(name)
    return derived


def _mentions(value: str, names: set[str]) -> bool:
    return any(re.search(rf"\b{re.escape(n)}\b", value) for n in names)


def _is_thread_expr(node, derived: set[str]) -> bool:
    for n in _walk(node):
        if n.type == "identifier":
            t = _text(n)
            if t in ("threadIdx", "blockDim") or t in derived or _THREAD_NAME.fullmatch(t):
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
