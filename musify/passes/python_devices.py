"""Device and backend strings in PyTorch Python: `"cuda"` -> `"musa"`, `"nccl"` -> `"mccl"`.

A string is rewritten only where its use says it is a device or a backend (the argument of a
`device`, `to` or `autocast` call, a `device=` argument or parameter default, a comparison with
`x.device.type`, ...: `mark_uses`, from `rules/pytorch/python.toml`); any other string that reads
as a device is reported (MU6012), never guessed at, and docstrings are left alone. The walk that
hands the strings over is `python_torch`'s.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from musify.passes.python_torch import Walk

_STR = re.compile(r"^([rRuUbB]{0,2})('''|\"\"\"|'|\")(.*)\2$", re.DOTALL)
_FSTR = re.compile(r"^([fFrR]{1,2})('''|\"\"\"|'|\")")


def mark_uses(w: Walk) -> None:
    """Mark the string nodes used as devices or backends, and the calls' function nodes."""
    dev = w.vocab["device"]
    backend = w.vocab["backend"]
    dev_calls, dev_arguments, dev_variables = dev["calls"], dev["arguments"], dev["variables"]
    backend_calls, backend_arguments = backend["calls"], backend["arguments"]
    comparisons = dev["comparisons"]
    funcs: set[int] = set()
    # (the attributes apart: a set whose order is nobody's, of the most numerous nodes)
    inner = {id(node.value) for node in w.tree.of(ast.Attribute)}
    call, assign, ann_assign, compare = ast.Call, ast.Assign, ast.AnnAssign, ast.Compare
    # in walk order: the first use of a string marks it (`_mark`)
    for node in w.tree.of(call, ast.arguments, assign, ann_assign, compare, ast.Dict):
        cls = node.__class__
        if cls is call:
            func = node.func
            funcs.add(id(func))
            if node.args:
                last = last_name(func)
                if last in dev_calls:
                    _mark(w, node.args[0], "arg")
                if last in backend_calls:
                    _mark_backend(w, node.args[0])
            for k in node.keywords:
                if k.arg in dev_arguments:
                    _mark(w, k.value, "arg")
                elif k.arg in backend_arguments:
                    _mark_backend(w, k.value)
        elif cls is ast.arguments:
            positional = node.posonlyargs + node.args
            for arg, default in zip(positional[len(positional) - len(node.defaults):], node.defaults):
                if arg.arg in dev_arguments or dev_variables in arg.arg.lower():
                    _mark(w, default, "arg")
            for arg, default in zip(node.kwonlyargs, node.kw_defaults):
                if default is not None and (arg.arg in dev_arguments or dev_variables in arg.arg.lower()):
                    _mark(w, default, "arg")
        elif cls is assign or cls is ann_assign:
            if node.value is not None and _any_names_device(node.targets if cls is assign else (node.target,), (),
                                                            dev_variables):
                _mark(w, node.value, "arg")
        elif cls is compare:
            operands = [node.left, *node.comparators]
            if _any_names_device(operands, comparisons, dev_variables):
                for o in operands:
                    for item in (o.elts if isinstance(o, (ast.Tuple, ast.List, ast.Set)) else [o]):
                        _mark(w, item, "compare")
        else:
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value in dev_arguments:
                    _mark(w, v, "arg")
    w.ctx.scratch["py_call_funcs"] = funcs
    w.ctx.scratch["py_inner_chain"] = inner


def _any_names_device(nodes, names, word: str) -> bool:
    """Some node's last name is one of `names` or holds `word` in any case (`x.device`,
    `device_id`, `x.device.type`): a comparison's operands, an assignment's targets. A plain loop,
    not `any` over `last_name` calls: a big package has a few hundred thousand of them."""
    for node in nodes:
        cls = node.__class__
        if cls is ast.Attribute:
            name = node.attr
        elif cls is ast.Name:
            name = node.id
        else:
            continue
        if name in names or word in name.lower():
            return True
    return False


def last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _mark(w: Walk, node: ast.AST, how: str) -> None:
    if isinstance(node, (ast.Constant, ast.JoinedStr)):
        w.device_nodes.setdefault(id(node), how)
    elif isinstance(node, ast.IfExp):
        _mark(w, node.body, how)
        _mark(w, node.orelse, how)
    elif isinstance(node, ast.BoolOp):
        for v in node.values:
            _mark(w, v, how)


def _mark_backend(w: Walk, node: ast.AST) -> None:
    if isinstance(node, ast.Constant):
        w.backend_nodes.add(id(node))
    elif isinstance(node, ast.IfExp):
        _mark_backend(w, node.body)
        _mark_backend(w, node.orelse)


def is_device_string(value: object, device: str) -> bool:
    if not isinstance(value, str) or not value.startswith(device):
        return False
    rest = value[len(device):]
    return rest == "" or (rest[0] == ":" and rest[1:].isdigit())


def rewrite_string(w: Walk, node: ast.AST) -> None:
    """A device or backend string: renamed where its use says it is one, reported where not. Its
    text is read only once the value says it is one."""
    dev = w.vocab["device"]
    backend = w.vocab["backend"]
    if isinstance(node, ast.JoinedStr):
        head = node.values[0] if node.values else None
        if not (isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.startswith(dev["cuda"] + ":")):
            return
        s, e = w.tree.span(node)
        source = w.ctx.text[s:e]
        m = _FSTR.match(source)
        if id(node) in w.device_nodes and m and source.startswith(dev["cuda"] + ":", m.end()):
            w.edit(s + m.end(), s + m.end() + len(dev["cuda"]), dev["musa"], "device:" + dev["cuda"], "device")
        else:
            w.ctx.warn("MU6012", s, end=e, value=source, origin="pass:python_torch")
        return
    if id(node) in w.docstrings:
        return
    if id(node) in w.backend_nodes and node.value == backend["cuda"]:
        s, e = w.tree.span(node)
        _replace_in_literal(w, s, e, w.ctx.text[s:e], backend["cuda"], backend["musa"], "backend")
        return
    if not is_device_string(node.value, dev["cuda"]):
        return
    s, e = w.tree.span(node)
    source = w.ctx.text[s:e]
    how = w.device_nodes.get(id(node))
    if how is None:
        w.ctx.warn("MU6012", s, end=e, value=source, origin="pass:python_torch")
        return
    if _replace_in_literal(w, s, e, source, dev["cuda"], dev["musa"], "device") and how == "compare":
        w.ctx.warn("MU6011", s, end=e, value=source, origin="pass:python_torch")


def _replace_in_literal(w: Walk, s: int, e: int, source: str, old: str, new: str, kind: str) -> bool:
    m = _STR.match(source)
    if not m or not m.group(3).startswith(old):
        w.ctx.warn("MU6014", s, construct=source, why="a literal musify cannot edit in place (implicit "
                   "concatenation or escapes)", origin="pass:python_torch")
        return False
    at = s + len(m.group(1)) + len(m.group(2))
    w.edit(at, at + len(old), new, f"{kind}:{old}", kind)
    return True
