"""PyTorch Python: `torch.cuda` -> `torch.musa`, device strings, `.cuda()`, `import torch_musa`.

Works on the `ast` of the file (musify/frontend/python.py) and edits only names and the string
literals that are used as devices or backends, so comments, docstrings and formatting are kept
byte for byte. What to rewrite is data (`rules/pytorch/python.toml`). A string that says "cuda"
where musify cannot tell it is a device is reported, never guessed at; a file that does not parse
is left as it is, with MU6001. Device and backend strings are in `python_devices.py`, extension
builders' arguments (`setup.py`) in `python_setup.py`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from musify.engine.edits import Edit
from musify.frontend.python import PythonTree
from musify.passes._base import PassContext
from musify.passes.build_files import toolchain
from musify.passes.python_devices import last_name, mark_uses, rewrite_string
from musify.passes.python_setup import setup_edits
from musify.rules.vocab import python_vocab, records

LIBRARY = "pytorch-python"


@dataclass
class Walk:
    """What one pass over the tree collects; edits are made afterwards, once per place."""

    ctx: PassContext
    tree: PythonTree
    vocab: dict
    edits: list[Edit] = field(default_factory=list)
    torch_names: set[str] = field(default_factory=set)  # names bound to the torch module
    module_names: dict[str, str] = field(default_factory=dict)  # alias -> renamed module it is bound to
    renamed_names: dict[str, str] = field(default_factory=dict)  # imported name -> its MUSA name
    device_nodes: dict[int, str] = field(default_factory=dict)  # id(Constant) -> "arg" | "compare"
    backend_nodes: set[int] = field(default_factory=set)
    docstrings: set[int] = field(default_factory=set)
    imports_package: bool = False

    def edit(self, start: int, end: int, new: str, rule: str, kind: str = "name") -> None:
        self.edits.append(Edit(start, end, new, rule, LIBRARY, kind))


def run(ctx: PassContext) -> list[Edit]:
    tree = ctx.scan.tree
    if not isinstance(tree, PythonTree):
        return []
    if not _triggers().search(ctx.text):
        return []  # nothing here this pass could rewrite or report: the file is not even parsed
    if tree.module is None:
        offset = tree.line_starts[min(tree.error_line, len(tree.line_starts)) - 1] if tree.line_starts else 0
        ctx.warn("MU6001", offset, cause=tree.error, origin="pass:python_torch")
        return []
    w = Walk(ctx, tree, python_vocab())
    _bindings(w)
    mark_uses(w)
    _walk_nodes(w)
    w.edits.extend(setup_edits(ctx, tree, w.docstrings))
    _add_package_import(w)
    return [e._replace(category="python" if e.library == LIBRARY else "build") for e in w.edits]


def _walk_nodes(w: Walk) -> None:
    """The handlers over the tree's nodes, in walk order (an import met on the way adds names that
    later `Name` nodes are renamed by). Each node is handed to its handler only where the handler
    can act on it, which a few tests of the node itself decide: an attribute only where its name
    is a member's or its chain starts at torch or a renamed module's alias (`_attribute` acts on
    nothing else; and of a chain from torch, only one whose second name starts a renamed module's
    path, `torch.cuda...`, as `_module_match` asks), a call only where its callee is an inline
    builder or such a chain (`_call_checks`), a constant only where it is a string that is or
    starts with the CUDA device or backend name (`rewrite_string`). On vLLM's 3,365 Python files
    the handlers were called 1.0 M times and acted on a few thousand nodes."""
    tree = w.tree
    members = _table(w.vocab, "members", _MEMBERS)
    inlines = _table(w.vocab, "inlines", _INLINES)
    device, backend = w.vocab["device"]["cuda"], w.vocab["backend"]["cuda"]
    roots = w.torch_names | w.module_names.keys()
    torch_names, module_names, seconds = w.torch_names, w.module_names, _torch_seconds(w.vocab)
    renamed = w.renamed_names  # (filled by the imports the loop meets)
    attribute, name, call, constant, load = ast.Attribute, ast.Name, ast.Call, ast.Constant, ast.Load
    classes = (ast.Import, ast.ImportFrom, attribute, call, constant, ast.JoinedStr)
    if _may_rename_names(w):  # (else no name is renamed: the most numerous nodes, left out)
        classes += (name,)
    for node in tree.of(*classes):
        cls = node.__class__
        if cls is attribute:
            if node.attr in members:
                _attribute(w, node)
            elif roots:
                value = node.value
                if value.__class__ is name:  # (`a.b`, most chains: `_root_and_second` without its call)
                    root, second = value.id, node.attr
                else:
                    root, second = _root_and_second(node)
                if root in module_names or (root in torch_names and (seconds is None or second in seconds)):
                    _attribute(w, node)
        elif cls is name:
            if node.id in renamed and node.ctx.__class__ is load:
                s, e = tree.span(node)
                w.edit(s, e, renamed[node.id], node.id)
        elif cls is call:
            func = node.func
            if func.__class__ is name:  # (`f(...)`: its last name and its root are its name)
                if func.id in inlines or func.id in roots:
                    _call_checks(w, node)
            elif func.__class__ is attribute and (func.attr in inlines or (roots and _root_and_second(func)[0] in roots)):
                _call_checks(w, node)
        elif cls is constant:
            value = node.value
            if value.__class__ is str and (value.startswith(device) or value == backend):
                rewrite_string(w, node)
        elif cls is ast.ImportFrom:
            _import_from(w, node)
        elif cls is ast.Import:
            _import(w, node)
        else:
            rewrite_string(w, node)


def _may_rename_names(w: Walk) -> bool:
    """Whether an import of the file can make `_import_from` rename the names it imports (and
    their later uses): only one from a module whose names the vocabulary renames."""
    modules = _renaming_modules(w.vocab)
    return any(node.level == 0 and node.module in modules for node in w.tree.of(ast.ImportFrom))


def _renaming_modules(vocab: dict) -> frozenset[str]:
    return _table(vocab, "renaming modules",
                  lambda v: frozenset(m for m in _modules(v) if _name_table(v, m)))


def _torch_seconds(vocab: dict) -> frozenset[str] | None:
    """The second names of the renamed modules under torch ("cuda" of `torch.cuda`): a chain from
    torch whose second name is none of them matches no module (None: a module is torch itself)."""
    def make(v: dict) -> frozenset[str] | None:
        package = v["package"]["after"]
        paths = [m.split(".") for m in _modules(v)]
        if any(p == [package] for p in paths):
            return None
        return frozenset(p[1] for p in paths if p[0] == package)
    return _table(vocab, "torch seconds", make)


def _root_and_second(node: ast.Attribute) -> tuple[str | None, str]:
    """The name a chain starts at and the name after it (`a`, `b` of `a.b.c`); None for a chain
    that does not start at a name."""
    while True:
        value = node.value
        if value.__class__ is not ast.Attribute:
            return (value.id if value.__class__ is ast.Name else None), node.attr
        node = value


@lru_cache(maxsize=1)
def _triggers() -> re.Pattern[str]:
    """Text that any rewrite or diagnostic of this pass needs: a file without it is skipped."""
    v = python_vocab()
    tc = toolchain()
    words = {v["package"]["after"], v["device"]["cuda"], v["backend"]["cuda"], v["compile_args"]["cuda"],
             tc.compiler[0], *tc.variables, *(r["cuda"] for r in tc.paths), *tc.extensions, *tc.flags,
             *tc.arch_flags}
    return re.compile("|".join(sorted(map(re.escape, words), key=len, reverse=True)))


# --- bindings: which names stand for torch and for renamed modules ----------------------------

_TABLES: list = [None, {}]  # the vocabulary the tables below were made from, and the tables by key


def _table(vocab: dict, key: str, make: Callable[[dict], dict]) -> dict:
    """A lookup table made from `vocab` once, not once a node (the walk asked for the module table
    and scanned every member and check record at each attribute and call: 126,000 and 660,000
    times on vLLM's package); made again for another vocabulary. Read only by its callers."""
    if _TABLES[0] is not vocab:
        _TABLES[:] = [vocab, {}]
    made = _TABLES[1].get(key)
    if made is None:
        made = _TABLES[1][key] = make(vocab)
    return made


def _by(key: str, field: str) -> Callable[[dict], dict]:
    """A maker for `_table`: the `key` records grouped by their `field`, in the records' order."""
    def make(vocab: dict) -> dict:
        out: dict = {}
        for r in records(vocab, key):
            out.setdefault(r[field], []).append(r)
        return out
    return make


_MEMBERS, _CHECKS, _INLINES = _by("member", "cuda"), _by("check", "call"), _by("inline", "call")


def _modules(vocab: dict) -> dict[str, str]:
    return _table(vocab, "modules", lambda v: {r["cuda"]: r["musa"] for r in records(v, "module")})


def _bindings(w: Walk) -> None:
    modules = _modules(w.vocab)
    package = w.vocab["package"]
    for node in w.tree.of(ast.Import, ast.ImportFrom, ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == package["after"]:
                    w.torch_names.add(a.asname or package["after"])
                elif a.name.startswith(package["after"] + ".") and a.asname is None:
                    w.torch_names.add(package["after"])
                if a.name in modules and a.asname:
                    w.module_names[a.asname] = a.name
                if a.name.split(".")[0] == package["musa"]:
                    w.imports_package = True
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == package["musa"]:
                w.imports_package = True
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full in modules:
                    w.module_names[a.asname or a.name] = full
        elif isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                w.docstrings.add(id(body[0].value))


def _chain(node: ast.AST) -> list[ast.AST] | None:
    """[Name, Attribute, Attribute, ...] for a dotted name `a.b.c`, or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node)
    parts.reverse()
    return parts


def _part_span(w: Walk, node: ast.AST) -> tuple[int, int] | None:
    """The span of the last name of a chain part, checked against the text."""
    _s, e = w.tree.span(node)
    name = node.attr if isinstance(node, ast.Attribute) else node.id
    if w.ctx.text[e - len(name):e] != name:
        return None
    return e - len(name), e


def resolve(w: Walk, node: ast.AST) -> list[str] | None:
    """The dotted path a chain stands for, aliases resolved (`th.cuda` -> torch.cuda)."""
    parts = _chain(node)
    if parts is None:
        return None
    root = parts[0].id
    names = [p.attr for p in parts[1:]]
    if root in w.torch_names:
        return [w.vocab["package"]["after"], *names]
    if root in w.module_names:
        return [*w.module_names[root].split("."), *names]
    return None


# --- attribute chains and members ---------------------------------------------------------------

def _attribute(w: Walk, node: ast.Attribute) -> None:
    parts = _chain(node)
    if parts is not None and parts[0].id in w.torch_names and _is_outermost(w, node):
        _torch_chain(w, parts)
    if parts is not None and parts[0].id in w.module_names and len(parts) == 2:
        module = w.module_names[parts[0].id]
        new = _name_table(w.vocab, module).get(node.attr)
        if new and new != node.attr and (span := _part_span(w, node)):
            w.edit(*span, new, f"{module}.{node.attr}")
        return
    if parts is not None and (parts[0].id in w.torch_names or parts[0].id in w.module_names) \
            and _module_match(w, resolve(w, node)):
        return
    for member in _table(w.vocab, "members", _MEMBERS).get(node.attr, ()):
        if member.get("call") and id(node) not in w.ctx.scratch.get("py_call_funcs", ()):
            continue
        span = _part_span(w, node)
        if span:
            w.edit(*span, member["musa"], "." + member["cuda"], "member")


def _is_outermost(w: Walk, node: ast.Attribute) -> bool:
    return id(node) not in w.ctx.scratch.setdefault("py_inner_chain", set())


def _module_match(w: Walk, full: list[str] | None) -> tuple[str, str] | None:
    if not full:
        return None
    dotted = ".".join(full)
    for cuda, musa in _modules(w.vocab).items():
        if dotted == cuda or dotted.startswith(cuda + "."):
            return cuda, musa
    return None


def _torch_chain(w: Walk, parts: list[ast.AST]) -> None:
    full = [w.vocab["package"]["after"], *[p.attr for p in parts[1:]]]
    match = _module_match(w, full)
    if match is None:
        return
    cuda, musa = (m.split(".") for m in match)
    if len(cuda) != len(musa) or (cuda[0] != musa[0] and parts[0].id != cuda[0]):
        w.ctx.warn("MU6014", w.tree.span(parts[0])[0], construct=".".join(full),
                   why=f"write it as {'.'.join(musa)}", origin="pass:python_torch")
        return
    for i, (old, new) in enumerate(zip(cuda, musa)):
        if old != new and (span := _part_span(w, parts[i])):
            w.edit(*span, new, ".".join(cuda), "module")
    if len(full) > len(cuda) and len(parts) > len(cuda):
        name = full[len(cuda)]
        new_name = _name_table(w.vocab, ".".join(cuda)).get(name)
        if new_name and new_name != name and (span := _part_span(w, parts[len(cuda)])):
            w.edit(*span, new_name, f"{'.'.join(cuda)}.{name}")


def _name_table(vocab: dict, module: str) -> dict[str, str]:
    return _table(vocab, "names " + module,
                  lambda v: {r["cuda"]: r["musa"] for r in records(v, "name") if r["module"] == module})


# --- imports ----------------------------------------------------------------------------------------

def _import(w: Walk, node: ast.Import) -> None:
    modules = _modules(w.vocab)
    for a in node.names:
        for cuda, musa in modules.items():
            if a.name == cuda or a.name.startswith(cuda + "."):
                s, _ = w.tree.span(a)
                if w.ctx.text[s:s + len(a.name)] == a.name:
                    w.edit(s, s + len(cuda), musa, cuda, "module")
                break


def _module_span(w: Walk, node: ast.ImportFrom) -> tuple[int, int] | None:
    s, e = w.tree.span(node)
    m = re.match(r"from\s+", w.ctx.text[s:e])
    if not m or not w.ctx.text.startswith(node.module or "", s + m.end()):
        return None
    return s + m.end(), s + m.end() + len(node.module or "")


def _import_from(w: Walk, node: ast.ImportFrom) -> None:
    if node.level or not node.module:
        return
    modules = _modules(w.vocab)
    for cuda, musa in modules.items():
        if node.module == cuda or node.module.startswith(cuda + "."):
            table = _name_table(w.vocab, cuda)
            if table and node.module == cuda:
                missing = [a.name for a in node.names if a.name not in table]
                if missing:
                    # nothing torch_musa provides: the import is already what a port needs (the
                    # first half of a split, run again on its own output, among others)
                    star = any(a.name == "*" for a in node.names)
                    if (star or len(missing) < len(node.names)) and not _split_import(w, node, table, cuda, musa,
                                                                                      missing):
                        w.ctx.warn("MU6004", w.tree.span(node)[0], module=cuda, names=", ".join(missing),
                                   musa=musa, origin="pass:python_torch")
                    return
            span = _module_span(w, node)
            if span is None:
                return
            w.edit(span[0], span[0] + len(cuda), musa, cuda, "module")
            if table and node.module == cuda:
                _rename_imported(w, node, table, cuda)
            return
    # from torch import cuda  ->  from torch import musa as cuda
    for a in node.names:
        full = f"{node.module}.{a.name}"
        if full not in modules:
            continue
        musa = modules[full]
        parent, _, last = musa.rpartition(".")
        if parent != node.module:
            if len(node.names) != 1 or (span := _module_span(w, node)) is None:
                w.ctx.warn("MU6014", w.tree.span(node)[0], construct=f"from {node.module} import {a.name}",
                           why=f"import {musa} instead", origin="pass:python_torch")
                continue
            w.edit(*span, parent, full, "module")
        s, _ = w.tree.span(a)
        if w.ctx.text.startswith(a.name, s):
            w.edit(s, s + len(a.name), last if a.asname else f"{last} as {a.name}", full, "module")


def _split_import(w: Walk, node: ast.ImportFrom, table: dict[str, str], module: str, musa: str,
                  missing: list[str]) -> bool:
    """`from torch.utils.cpp_extension import CppExtension, CUDAExtension, CUDA_HOME` (most extension
    builds import a helper torch_musa lacks beside the builder) becomes two imports: the names
    torch_musa is not known to provide stay with torch, the others come from torch_musa under their
    MUSA names, and their uses follow. Done only where the import has its lines to itself and no
    comment inside (a comment has no place to go; one after it stays there); elsewhere the import is
    kept (MU6004)."""
    known = [a for a in node.names if a.name in table]
    if any(a.name == "*" for a in node.names):
        return False
    text = w.ctx.text
    start, end = w.tree.span(node)
    lines = w.tree.own_lines(node)
    if lines is None or "#" in text[start:end]:
        return False
    indent = text[lines[0]:start]
    newline = "\r\n" if text[end:end + 2] == "\r\n" else "\n"

    def names(aliases: list[ast.alias], rename: dict[str, str]) -> str:
        return ", ".join(rename.get(a.name, a.name) + (f" as {a.asname}" if a.asname else "") for a in aliases)

    kept = [a for a in node.names if a.name not in table]
    new = (f"from {module} import {names(kept, {})}{newline}"
           f"{indent}from {musa} import {names(known, table)}")
    w.edit(start, end, new, module, "module")
    for a in known:
        if a.asname is None and table[a.name] != a.name:
            w.renamed_names[a.name] = table[a.name]
        rule = next(r for r in records(w.vocab, "name") if r["module"] == module and r["cuda"] == a.name)
        if rule.get("guess"):
            w.ctx.warn("MU6005", start, a.name, module=module, musa=musa, origin="pass:python_torch")
    w.ctx.warn("MU6006", start, module=module, names=", ".join(missing), musa=musa, origin="pass:python_torch")
    return True


def _rename_imported(w: Walk, node: ast.ImportFrom, table: dict[str, str], module: str) -> None:
    for a in node.names:
        new = table[a.name]
        rule = next(r for r in records(w.vocab, "name") if r["module"] == module and r["cuda"] == a.name)
        s, _ = w.tree.span(a)
        if new != a.name and w.ctx.text.startswith(a.name, s):
            w.edit(s, s + len(a.name), new, f"{module}.{a.name}")
            if a.asname is None:
                w.renamed_names[a.name] = new
        if rule.get("guess"):
            w.ctx.warn("MU6005", s, a.name, module=module, musa=_modules(w.vocab)[module], origin="pass:python_torch")


def _add_package_import(w: Walk) -> None:
    """`import torch_musa` once, on the line after the first `import torch`."""
    package = w.vocab["package"]
    if w.imports_package or any(e.replacement.startswith(package["musa"] + ".") for e in w.edits):
        return
    for node in w.tree.of(ast.Import):
        if isinstance(node, ast.Import) and any(a.name == package["after"] or a.name.startswith(package["after"] + ".")
                                                for a in node.names):
            break
    else:
        return
    first = min((n for n in w.tree.of(ast.Import)
                 if any(a.name.split(".")[0] == package["after"] for a in n.names)),
                key=lambda n: (n.lineno, n.col_offset))
    text = w.ctx.text
    line_start = w.tree.line_starts[first.lineno - 1]
    indent = re.match(r"[ \t]*", text[line_start:]).group()
    end_line_start = w.tree.line_starts[first.end_lineno - 1]
    eol = text.find("\n", end_line_start)
    newline = "\n"
    if eol < 0:
        eol = len(text)
    elif eol > 0 and text[eol - 1] == "\r":
        eol -= 1
        newline = "\r\n"
    w.edits.append(Edit(eol, eol, f"{newline}{indent}import {package['musa']}", "import " + package["musa"],
                        LIBRARY, "import"))


# --- checks ----------------------------------------------------------------------------------------

def _call_checks(w: Walk, node: ast.Call) -> None:
    full = resolve(w, node.func)
    dotted = ".".join(full) if full else ""
    for check in _table(w.vocab, "checks", _CHECKS).get(dotted, ()):
        w.ctx.warn(check["diag"], w.tree.span(node)[0], end=w.tree.span(node)[1], call=check["call"],
                   origin="pass:python_torch")
    last = last_name(node.func)
    for inline in _table(w.vocab, "inlines", _INLINES).get(last, ()):
        if any(k.arg in inline["arguments"] for k in node.keywords) or len(node.args) > 2:
            w.ctx.warn(inline["diag"], w.tree.span(node)[0], call=last, origin="pass:python_torch")
