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

import re
from collections.abc import Container
from functools import lru_cache
from operator import is_

from musify.arch import WARP_WIDTH
from musify.classes import named_tuple
from musify.engine.edits import Edit
from musify.frontend import syntax
from musify.passes._base import PassContext
from musify.passes.hazards import warp_macros, warp_tree
from musify.passes.hazards.common import DeviceFunction, int_value, warp_severity
from musify.passes.hazards.file_facts import (
    device_functions_of,
    qualifier_triggers,
)
from musify.passes.hazards.warp_operands import code_test, index_part
from musify.passes.hazards.warp_precheck import bodies, file_may_report, may_report, trigger_uses
from musify.passes.literals import holds

_THREAD_NAME = re.compile(r"(?i)(tid|tx|ltid|lane\w*|\w*_lane|thread_?id\w*|thread_?idx|local_?id|warp_?id\w*)")
_INTEGRAL = re.compile(r"\b(int|unsigned|long|short|size_t|uint32_t|int32_t|uint64_t|int64_t|auto|char)\b")
# integer types exactly 32 bits wide on every MUSA and CUDA target
_INT32 = re.compile(r"^(?:const\s+)?(?:unsigned|signed|unsigned\s+int|signed\s+int|int|uint32_t|int32_t|"
                    r"std::uint32_t|std::int32_t|unsigned\s+long|long)(?:\s+const)?$")
# (operator, literal) pairs that take a lane or a warp number from a thread index, and what to
# write instead, with W the name the rules tag `warp-size`
_LANE_ARITH = {("&", 31): "% W (or & (W - 1))", ("%", 32): "% W", (">>", 5): "/ W", ("/", 32): "/ W"}
# a variable named as a bit position (a word of its name is bit or bits: `bit`, `bit_pos`,
# `bitOffset`, `nBits`): `bit >> 5` and `bit & 31` find its 32-bit word and the bit in it
# (vLLM-style packed indices in GPTQModel's VPTQ kernel), whatever thread computed it
_BIT_NAME = re.compile(r"(?:^|_|(?<=[a-z0-9])(?=[A-Z]))(?:[Bb]its?|BITS?)(?=$|_|\d|[A-Z])")


@named_tuple  # a named tuple: a frozen dataclass's class cost 1 ms an import; typing.NamedTuple
class _Names:  # compiled each of its string annotations at every start-up
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
    sets = tuple(map(ruleset.by_hazard.get, _TAGS))  # `tagged`, with None for no set (in C: asked per file)
    made = getattr(ruleset, "_warp_names", None)
    if made is None or not all(map(is_, made[0], sets)):
        made = ruleset._warp_names = (sets, _Names(*map(ruleset.tagged, _TAGS)))
    return made[1]


# every finding is in a device function: not called on a file without a qualifier word
triggers = qualifier_triggers


def run(ctx: PassContext) -> list[Edit]:
    # no `may_have_device_functions` test: the runner calls this only on a file holding a
    # qualifier word (`triggers`), which is all that test asks before the functions are found
    text = ctx.text
    shuffles, results = trigger_uses(ctx)
    loops = None  # the loops that may be offset loops calling a shuffle through a project macro
    if not holds(ctx, "<<<") and not file_may_report(text, shuffles, results):
        loops = warp_macros.loop_offsets(text)
        if not loops:
            # no function could pass the tests below, nor hold such a loop: its device functions are
            # not even found (with a launch the features pass finds them anyway, and the tests per
            # body cost less than the file's)
            return []
    functions = device_functions_of(ctx)
    picked = bodies(text, functions, shuffles, results)  # a trigger in the body (most files: none)
    reported: set[int] = set()  # the functions given an MU2023 here
    if picked:
        names = _names(ctx)
        code = ctx.scan.code_map()
        for k in picked:
            fn = functions[k]
            if may_report(snippet := text[fn.start:fn.end], names, code_test(code, fn.start)) \
                    and "MU2023" in _check_function(ctx, fn, names, snippet):
                reported.add(k)
    if loops is None:
        loops = warp_macros.loop_offsets(text, functions)  # (only where the device code is)
    if loops:
        warp_macros.hidden_loops(ctx, functions, reported, loops)
    return []


def _check_function(ctx: PassContext, fn: DeviceFunction, names: _Names, snippet: str | None = None) -> set[str]:
    """Report the function's findings; the IDs reported."""
    if snippet is None:
        snippet = ctx.text[fn.start:fn.end]
    tree = warp_tree.Function(snippet)
    text = tree.text
    to_char = warp_tree.offset_converter(snippet)
    arch = ctx.options.arch
    common = {"arch": arch, "width": WARP_WIDTH.get(arch, 128), "func": fn.name}
    severity = warp_severity(arch)
    found: dict[str, list[tuple[int, object, dict]]] = {}
    seen: set[tuple[str, int]] = set()  # (diagnostic, offset) reported: one site each (a set, not a
    # scan of the sites so far, quadratic on a generated kernel with thousands of them)

    def report(node, diag: str, **args) -> None:
        offset = fn.start + to_char(node.start_byte)
        if (diag, offset) not in seen:
            seen.add((diag, offset))
            found.setdefault(diag, []).append((offset, node, args))

    _run_checks(tree, names, report)
    for diag, sites_of in sorted(found.items(), key=lambda kv: kv[1][0][0]):
        offset, node, args = sites_of[0]
        where = tuple(ctx.lines.position(at) for at, _, _ in sites_of[1:])
        level = "note" if diag == "MU2020" else severity
        spelled = text(node)
        ctx.warn(diag, offset, spelled, level, end=offset + len(spelled), origin="pass:warp_size",
                 sites=where, **{**common, "count": len(sites_of), **args})
    return set(found)


def _run_checks(tree: warp_tree.Function, names: _Names, report, walked: bool = False) -> None:
    """Every check on the function's sites, in document order (outer first). On ASCII text only
    the nodes with a landmark of a report are sites (`warp_tree.candidates`); otherwise, or with
    `walked` (the reference tests/test_warp_tree.py holds them to), every node of the walk."""
    found = None if walked else _candidates(tree, names)
    kinds = warp_tree.collect(tree.root) if found is None else found
    inits = [_init_of(node, tree, names) for node in kinds["init_declarator"]]
    if found is None:
        derived = _thread_variables(inits, kinds["parameter_declaration"], names, tree)
    else:
        derived = _Derived(tree, names)
    text = tree.text
    masks = {i.name for i in inits if i.from_result}
    bit_used = _used_as_bits(tree.root, masks, names, text) if masks else set()
    full = {i.name for i in inits if i.full_mask}
    carried = _passed_on(tree.root, full, text) if full else set()
    sites = [(n, _check_call) for n in kinds["call_expression"]]
    sites += [(n, _check_binary) for n in kinds["binary_expression"] if _may_flag_binary(n, tree)]
    sites += [(i.node, i) for i in inits]
    sites += [(n, _check_for) for n in kinds["for_statement"]]
    sites.sort(key=lambda site: (site[0].start_byte, -site[0].end_byte))
    for node, check in sites:
        if check is _check_call:
            _check_call(node, names, masks, report, tree)
        elif check is _check_binary:
            _check_binary(node, names, derived, masks, report, tree)
        elif check is _check_for:
            _check_for(node, names, report, tree)
        else:
            _check_init(check, names, bit_used, carried, report, text)


def _candidates(tree: warp_tree.Function, names: _Names) -> dict[str, list] | None:
    """`warp_tree.candidates`, or None where the text is not ASCII or a tagged name is no plain
    identifier (`warp_tree.call_pattern`). The declarations are then read in full (`_Derived`)
    only when a lane test has no thread index or tid-like name of its own."""
    if not tree.ascii:
        return None
    pattern = warp_tree.call_pattern(_called_names(names))
    return None if pattern is None else warp_tree.candidates(tree, pattern, names)


class _Derived:
    """`_thread_variables` of a function, worked out when first asked (most lane tests name a
    thread index themselves)."""

    __slots__ = ("made", "names", "tree")

    def __init__(self, tree: warp_tree.Function, names: _Names) -> None:
        self.tree, self.names, self.made = tree, names, None

    def __contains__(self, name: str) -> bool:
        if self.made is None:
            tree, names = self.tree, self.names
            if len(tree.snippet) < BIG_FUNCTION and not _QUERIED:
                kinds = warp_tree.collect(tree.root)
                declared, params = kinds["init_declarator"], kinds["parameter_declaration"]
            else:  # a query's captures (in C) rather than a walk of every node in Python
                captured = syntax.captures(tree.root, _DECLARATIONS)
                declared, params = captured.get("init", []), captured.get("param", [])
                _QUERIED[:] = [True]
            inits = [_declaration_of(node, tree) for node in declared]
            self.made = _thread_variables(inits, params, names, tree)
        return name in self.made


# a function this long (characters) has its declarations found by `_DECLARATIONS`' captures, not
# by `warp_tree.collect`: the walk makes a Python object of every node (about 0.8 us each, a node
# every 3-4 bytes; 0.9 s for the nine 400 KB kernels of one generated FlashInfer header), the
# query costs about 17 ms to compile once a process. `_thread_variables` reads the declarations
# in any order (its steps are sets), and the captures come in no fixed one.
BIG_FUNCTION = 64 * 1024
# [True] once this process has compiled that query: from then on every function's declarations
# come from it (about five times faster than the walk per node, its compile paid)
_QUERIED: list = []


_CALLED: tuple = (None, frozenset())  # the last `_Names` `_called_names` was given, and its answer


def _called_names(names: _Names) -> frozenset[str]:
    """Every name a site's call can be of: the checked calls' and the lane-mask results'."""
    global _CALLED
    made = _CALLED
    if made[0] is not names:
        made = _CALLED = (names, names.mask_arg | names.popcount | names.shuffle | names.mask_result)
    return made[1]


@named_tuple  # not typing.NamedTuple: that compiled its seven string annotations at every start-up
class _Init:
    """What the checks ask of one `init_declarator`, read from the tree once."""

    node: object
    name: str | None  # the declarator's text
    value: object  # the value node, or None
    value_text: str
    type: str | None  # the declaration's type, as written
    from_result: bool  # named and valued, the value calling a lane-mask result
    full_mask: bool  # named like a mask and initialised with the full 32-bit mask


def _init_of(node, tree: warp_tree.Function, names: _Names) -> _Init:
    init = _declaration_of(node, tree)
    name, value = init.name, init.value
    if name is None or value is None:
        return init
    return _Init(node, name, value, init.value_text, init.type, tree.calls(value, names.mask_result),
                 "mask" in name.lower() and warp_tree.is_full_mask(value, tree.text))


def _declaration_of(node, tree: warp_tree.Function) -> _Init:
    """An `init_declarator` as `_thread_variables` reads it (name, value, type): `_init_of`
    without its two questions about the value, which only the checks ask (a generated kernel's
    thousands of declarations were each asked them when only its thread variables were wanted)."""
    text = tree.text
    name, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
    decl = node.parent
    type_node = decl.child_by_field_name("type") if decl is not None else None
    return _Init(node, None if name is None else text(name), value, "" if value is None else text(value),
                 text(type_node) if type_node is not None else None, False, False)


def _check_init(init: _Init, names: _Names, bit_used: set[str], carried: set[str], report, text) -> None:
    name, value = init.name, init.value
    if name is None or value is None:
        return
    if init.full_mask:
        if name in carried:
            report(value, "MU2020", expr=text(value), call=f"the lane mask {name}")
        return
    if bit_used and name in bit_used and init.from_result and init.type is not None \
            and _INT32.match(" ".join(init.type.split())):
        report(value, "MU2041", expr=" ".join(text(init.node).split()),
               how=f"kept in a 32-bit '{' '.join(init.type.split())}' and used as lane bits")


def _check_call(node, names: _Names, masks: set[str], report, tree: warp_tree.Function) -> None:
    text = tree.text
    fn = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    if fn is None or args is None:
        return
    name = text(fn)
    if name not in names.mask_arg and name not in names.popcount and name not in names.shuffle:
        return  # every check below asks for one of these
    values = [c for c in args.named_children if c.type != "comment"]
    if name in names.mask_arg and values and warp_tree.is_full_mask(values[0], text):
        report(values[0], "MU2020", expr=text(values[0]), call=f"{name}()")
    if name in names.popcount and values and (tree.calls(values[0], names.mask_result) or text(values[0]) in masks):
        report(node, "MU2041", expr=" ".join(text(node).split()), how=f"counted with {name}()")
    if name in names.shuffle:
        width_at = 3 if name in names.mask_arg else 2
        if len(values) > width_at and int_value(text(values[width_at])) == 32:
            report(values[width_at], "MU2022", call=name)
        offset_at = width_at - 1
        if name in names.shuffle_offset and len(values) > offset_at and int_value(text(values[offset_at])) == 16:
            report(values[offset_at], "MU2023", expr=f"{name}(..., 16)")


# every spelling of the numbers `_check_binary` reports on (31, 32, 5, the full mask, `~0`) holds
# one of these: decimal with leading zeros and suffixes ("032u"), hex ("0x20", "0x1F",
# "0xFFFFFFFF"), `~`
_NUMBER_HINT = re.compile(r"3[12]|20|1[fF]|5|~|[fF]{8}")


def _may_flag_binary(node, tree: warp_tree.Function) -> bool:
    """False only where `_check_binary` cannot report `node`: its operator is none it checks, or
    (on ASCII text, where `int_value` reads ASCII digits only) no number it reports on is
    spelled in it. Most binary expressions are `i < n` or `a * b`: two field reads end them."""
    if tree.ascii and _NUMBER_HINT.search(tree.text(node)) is None:
        return False
    op = node.child_by_field_name("operator")
    return op is not None and tree.text(op) in _CHECKED_OPS


def _check_binary(node, names: _Names, derived: Container[str], masks: set[str], report,
                  tree: warp_tree.Function) -> None:
    text = tree.text
    op_text = text(node.child_by_field_name("operator"))
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None:
        return
    left_text, right_text = text(left), text(right)
    lval, rval = warp_tree.operand_value(left, text), warp_tree.operand_value(right, text)
    if op_text in ("==", "!="):
        for mask_side, other in ((left, right), (right, left)):
            if warp_tree.is_full_mask(other, text) and (text(mask_side) in masks or tree.calls(mask_side, names.mask_result)):
                report(node, "MU2041", expr=_expr(node, text), how="compared with the full 32-bit mask")
                return
    if (left_text in names.warp_size or right_text in names.warp_size) and 32 in (lval, rval) \
            and op_text in _COMPARISONS:
        report(node, "MU2025", expr=_expr(node, text))
        return
    if left.type == "identifier" and _BIT_NAME.search(left_text):
        return  # a bit position in words of 32 bits, not a lane or a warp (`_BIT_NAME`)
    fix = _LANE_ARITH.get((op_text, rval))
    if fix is not None and _is_thread_expr(left, derived, names, text):
        report(node, "MU2021", expr=_expr(node, text),
               fix=fix.replace("W", min(names.warp_size, default="the warp size")))
    elif (op_text, rval) in (("<", 32), ("<=", 31), (">=", 32), (">", 31)) and \
            _is_thread_expr(left, derived, names, text):
        report(node, "MU2024", expr=_expr(node, text))


def _check_for(node, names: _Names, report, tree: warp_tree.Function) -> None:
    if _is_warp_offset_loop(node, names, tree):
        header = tree.text(node).split(")", 1)[0] + ")"
        report(node, "MU2023", expr=" ".join(header.split()))


def _expr(node, text) -> str:
    """The node's text on one line, as a diagnostic shows it (made only for what is reported)."""
    return " ".join(text(node).split())


_COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">="})
# every operator `_check_binary` can report on: the comparisons and the lane arithmetic's
_CHECKED_OPS = _COMPARISONS | {op for op, _ in _LANE_ARITH}


def _is_warp_offset_loop(node, names: _Names, tree: warp_tree.Function) -> bool:
    """`for (o = 16; o > 0; o >>= 1)` or `for (o = 1; o < 32; o <<= 1)` around a shuffle."""
    init = node.child_by_field_name("initializer")
    cond = node.child_by_field_name("condition")
    body = node.child_by_field_name("body")
    if init is None or cond is None or body is None:
        return False
    # the body, the largest part, is searched last
    return (tree.holds_literal(init, 16) or tree.holds_literal(cond, 32)) and tree.calls(body, names.shuffle)


_WRAPPERS = frozenset({"parenthesized_expression", "cast_expression"})


def _passed_on(root, wanted: set[str], text) -> set[str]:
    """The variables of `wanted` passed to a call (as an argument, or `&`/`|`-combined into one)
    or returned as they are: only then can a value be a lane mask. A full 32-bit constant that
    is only computed with (nvshmem's `const uint64_t mask_4_bytes = 0x00000000ffffffff;` then
    `low = v & mask_4_bytes;`) is a byte mask, and a note that MUSA reads it as the whole warp
    would be wrong."""
    out = set()
    for n in warp_tree.identifiers_named(root, wanted, text):
        name = text(n)
        if name in out:
            continue
        parent = _above(n)
        if parent is not None and parent.type == "binary_expression" and \
                text(parent.child_by_field_name("operator")) in ("&", "|"):
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


def _used_as_bits(root, masks: set[str], names: _Names, text) -> set[str]:
    """The mask variables the code reads as bits: any use but passing the mask on as a call
    argument (to a `*_sync` call or a helper), which is how warp-agnostic code carries it."""
    out = set()
    for n in warp_tree.identifiers_named(root, masks, text):
        if text(n) in out:
            continue
        parent = n.parent
        if parent is None or parent.type in ("init_declarator", "declaration"):
            continue
        if parent.type == "argument_list":
            call = parent.parent
            fn = call.child_by_field_name("function") if call is not None else None
            if fn is None or text(fn) not in names.popcount:
                continue
        out.add(text(n))
    return out


def _thread_variables(inits: list[_Init], params: list, names: _Names, tree: warp_tree.Function) -> set[str]:
    """Integer variables computed from a thread index or block size, or from each other through
    any number of links, plus tid-like names. The links are followed in steps, each from the
    names the step before found, until a step finds none: the answer is the same in any order of
    the declarations. (Until 2026-12-07 a chain of four links or more was followed in three
    rounds over the declarations in the order a tree-sitter query captured them; py-tree-sitter
    0.26 lists a query's captures in no fixed order, different from one call to the next, so such
    a variable was found in one run and not in the next: vLLM's `octave_prefill_rdna3.cu` said
    "+3 more in this function" or "+1 more" depending on what else the run had migrated.)"""
    text = tree.text
    seeds: set[str] = set()
    for node in params:
        name = node.child_by_field_name("declarator")
        if name is not None and _THREAD_NAME.fullmatch(text(name)):
            seeds.add(text(name))
    derived = set(seeds)
    words, odd = _Words(), oddities(seeds)
    pending = _declared_integers(inits, names)
    while True:
        found = {name for name, value, from_index in pending
                 if name not in derived and (from_index or words.mentions(value, derived, odd))}
        if not found:
            return derived
        derived |= found
        odd |= oddities(found)
        pending = [decl for decl in pending if decl[0] not in derived]


# the declarations `_Derived` reads from a big function, found by a query (in C)
_DECLARATIONS = "(init_declarator) @init (parameter_declaration) @param"


def _declared_integers(inits: list[_Init], names: _Names) -> list[tuple[str, str, bool]]:
    """(name, value, whether the value names a thread index) of each integer declaration with
    a value, in the order of `inits`."""
    decls = []
    for init in inits:
        if init.type is None or not _INTEGRAL.search(init.type):
            continue
        if init.name is not None and init.value is not None:
            value = index_part(init.value_text)
            decls.append((init.name, value, _mentions(value, names.thread_index)))
    return decls


def _mentions(value: str, names) -> bool:
    """One of `names` stands in `value` as a whole word (the reference `_Words.mentions` is tested
    against; asked of every declaration with the thread-index names). A plain loop: the generator
    `any` was handed made a frame a call."""
    for n in names:
        if n in value and _word(n).search(value):
            return True
    return False


@lru_cache(maxsize=4096)
def _word(name: str) -> re.Pattern[str]:
    """`name` as a whole word (compiled once: `re.search` with a new string looked it up per call)."""
    return re.compile(rf"\b{re.escape(name)}\b")


_RUN = re.compile(r"\w+")  # a maximal run of word characters, as `\b` delimits them


class _Words:
    """`_mentions` for the thread-variable rounds, which ask it of every declaration's value with
    a growing set of names. Each value's words are read once: a whole-word occurrence of a name
    made only of word characters is one of the value's maximal `\\w+` runs, so the question becomes
    whether two sets meet (each round searched every value for every name, quadratic on a
    generated kernel with thousands of declarations: 1.2 s of one 3.9 MB FlashInfer header). A
    name with another character (a declarator such as `*p`) is still looked for by `_mentions`:
    the caller keeps those apart (`odd`), as `oddities` gives them."""

    __slots__ = ("_of",)

    def __init__(self) -> None:
        self._of: dict[str, frozenset[str]] = {}  # a value -> its words

    def mentions(self, value: str, names: set[str], odd: set[str]) -> bool:
        """`_mentions(value, names)`, where `odd` holds the names of `names` that are not a
        plain run of word characters."""
        words = self._of.get(value)
        if words is None:
            words = self._of[value] = frozenset(_RUN.findall(value))
        return not words.isdisjoint(names) or (bool(odd) and _mentions(value, odd))


def oddities(names) -> set[str]:
    """The names that are not one plain run of word characters (`_Words.mentions`' `odd`)."""
    return {n for n in names if not _RUN.fullmatch(n)}


def _is_thread_expr(node, derived: Container[str], names: _Names, text) -> bool:
    """An identifier under `node` is a thread index, tid-like, or one of `derived` (asked last:
    it may be worked out only then, `_Derived`)."""
    found = [text(n) for n in warp_tree.walk(node) if n.type == "identifier"]
    for t in found:
        if t in names.thread_index or _THREAD_NAME.fullmatch(t):
            return True
    return any(t in derived for t in found)
