"""setup.py and JIT builds: the extension builders' compiler arguments and file lists.

`extra_compile_args={"cxx": [...], "nvcc": [...]}` gets the `mcc` key (torch_musa's
MUSAExtension), and the flags under it become mcc flags (`rules/build/toolchain.toml`: dropped
nvcc-only flags are reported, arch flags go through the arch policy). String literals that name
`.cu` files follow the file renames; install paths, `CUDA_HOME` and `TORCH_CUDA_ARCH_LIST` get
their MUSA names. Only string literals are touched, never comments or docstrings.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from itertools import pairwise

from musify.engine.edits import Edit
from musify.frontend.python import PythonTree
from musify.passes._base import PassContext
from musify.passes.build_files import (
    is_arch_list,
    library_rename,
    may_rewrite_word,
    not_translated,
    rewrite_word,
    rewrite_words,
    toolchain,
    translate_arch_list,
    translate_flag,
    warn_change,
)
from musify.rules.vocab import python_vocab

_SIMPLE = re.compile(r"^([rRuU]?)('|\")([^'\"\\\n]*)\2$")
ORIGIN = "pass:python_setup"


def setup_edits(ctx: PassContext, tree: PythonTree, docstrings: set[int]) -> list[Edit]:
    vocab = python_vocab()["compile_args"]
    edits: list[Edit] = []
    flag_strings: set[int] = set()
    lists: list[ast.AST] = []
    assigned = _list_assignments(tree.module)
    nvcc, constant = vocab["cuda"], ast.Constant
    # a call only where a keyword it looks for can be among its arguments (most files call much
    # and name neither): a keyword is a name of the text, as written where the text is ASCII
    text = ctx.text
    flag_lists = vocab["flag_lists"]
    calls = not text.isascii() or any(word in text for word in (*flag_lists, "libraries"))
    for node in tree.of(ast.Dict, ast.Subscript, ast.Call) if calls else tree.of(ast.Dict, ast.Subscript):
        cls = node.__class__
        if cls is ast.Dict:
            for k, v in zip(node.keys, node.values):
                if k.__class__ is constant and k.value == nvcc:
                    flag_strings.add(id(k))
                    edits.extend(_key(ctx, tree, k, vocab))
                    lists.append(assigned.get(v.id, v) if isinstance(v, ast.Name) else v)
        elif cls is ast.Subscript:
            if node.slice.__class__ is constant and node.slice.value == nvcc:
                flag_strings.add(id(node.slice))
                edits.extend(_key(ctx, tree, node.slice, vocab))
        else:
            for k in node.keywords:
                if k.arg in flag_lists:
                    lists.append(assigned.get(k.value.id, k.value) if isinstance(k.value, ast.Name) else k.value)
                elif k.arg == "libraries" and isinstance(k.value, (ast.List, ast.Tuple)):
                    flag_strings.update(id(e) for e in k.value.elts)
                    edits.extend(_libraries(ctx, tree, k.value))
    # any other literal list of strings that holds an nvcc flag (`nvcc_args.extend(("-gencode", ...))`),
    # in a file that builds CUDA code: elsewhere a list like ["-lineinfo"] is some other tool's
    # (Triton's compiler.py passes it to ptxas)
    builds = _builds_cuda(ctx.text)
    if builds:
        lists.extend(n for n in tree.of(ast.List, ast.Tuple) if _holds_flag(ctx, n))
        edits.extend(_appended_pairs(ctx, tree, flag_strings))
    seen_lists: set[int] = set()
    for lst in lists:
        if isinstance(lst, (ast.List, ast.Tuple)) and id(lst) not in seen_lists:
            seen_lists.add(id(lst))
            edits.extend(_flag_list(ctx, tree, lst, flag_strings))
    arch_lists, computed = _arch_list_values(tree) if _names_arch_list(ctx.text) else ({}, ())
    for node in computed:
        warn_change(ctx, not_translated(ast.get_source_segment(ctx.text, node) or "?",
                                        "it is computed when the script runs"), *tree.span(node), ORIGIN)
    for node in tree.of(ast.Constant):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in flag_strings \
                and id(node) not in docstrings:
            edits.extend(_arch_list(ctx, tree, node, arch_lists[id(node)]) if id(node) in arch_lists
                         else _plain_string(ctx, tree, node, builds))
    return edits


def _names_arch_list(text: str) -> bool:
    """Whether the text names a variable whose value lists CUDA capabilities (most files do not:
    their nodes are not walked again for it)."""
    return any(name in text for name in _arch_list_names())


@lru_cache(maxsize=1)
def _arch_list_names() -> tuple[str, ...]:
    return tuple(name for name in toolchain().variables if is_arch_list(name))


def _arch_list_values(tree: PythonTree) -> tuple[dict[int, bool], list[ast.AST]]:
    """The string literals given as TORCH_CUDA_ARCH_LIST's value: `os.environ["…"] = "8.0;8.6"`,
    `environ.setdefault("…", "8.0")`, `{"…": "8.0"}`, `dict(…="8.0")` and the default of
    `environ.get("…", "8.0")`, by `id`, each with whether it is only such a default (read when the
    variable is not set, and often no list at all: `get("…", "Not Set")`); and the values assigned
    to `…["TORCH_CUDA_ARCH_LIST"]` that the script computes (an f-string, a call, a join: CUDA
    capabilities made from the GPU, as a rule), not those it only passes on (a name: the value it
    saved before)."""
    def key(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and is_arch_list(node.value)

    def value(node: ast.AST) -> int | None:
        return id(node) if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    found: dict[int | None, bool] = {}
    computed = []
    for node in tree.of(ast.Assign, ast.Dict, ast.Call):
        if isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Subscript) and key(t.slice) for t in node.targets):
                found[value(node.value)] = False
                if not isinstance(node.value, (ast.Constant, ast.Name, ast.Attribute, ast.Subscript)):
                    computed.append(node.value)  # (a name or attribute: a value kept and put back, as a rule)
        elif isinstance(node, ast.Dict):
            found.update((value(v), False) for k, v in zip(node.keys, node.values) if k is not None and key(k))
        else:
            if len(node.args) >= 2 and key(node.args[0]):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                found[value(node.args[1])] = called in _READS
            found.update((value(k.value), False) for k in node.keywords if k.arg is not None and is_arch_list(k.arg))
    found.pop(None, None)
    return found, computed  # type: ignore[return-value]


_READS = frozenset({"get", "getenv"})  # calls whose second argument is a default read, not a value set


def _arch_list(ctx: PassContext, tree: PythonTree, node: ast.Constant, default: bool) -> list[Edit]:
    """TORCH_CUDA_ARCH_LIST's value as TORCH_MUSA_ARCH_LIST's (`translate_arch_list`); a default
    that is not a list of capabilities is left without a word (`default`: see `_arch_list_values`)."""
    span = _inside(ctx, tree, node)
    if span is None:
        return []
    change = translate_arch_list(node.value, ctx.options.arch_map)
    if default and change.diag != "MU6022":
        return []
    warn_change(ctx, change, *span, ORIGIN)
    if change.replacement == node.value:
        return []
    return [Edit(*span, change.replacement, "arch_list:" + node.value, "build", "flag")]


@lru_cache(maxsize=1)
def _builds() -> re.Pattern[str]:
    """What a Python file that builds CUDA code names: the compiler (the vocabulary's `nvcc` key),
    a build system, the torch extension builders and their modules and keywords."""
    alternatives = "|".join(sorted(map(re.escape, _vocab_build_words())))
    return re.compile(rf"\b(?:{alternatives}|cpp_extension|setuptools|distutils|setup(?=\s*\())\b")


@lru_cache(maxsize=1)
def _vocab_build_words() -> tuple[str, ...]:
    v = python_vocab()
    words = {v["compile_args"]["cuda"], *v["compile_args"]["keywords"], *v["compile_args"]["flag_lists"]}
    words |= {n["cuda"] for n in v["name"] if n.get("module")} | {n["module"] for n in v["name"] if n.get("module")}
    words |= {i["call"] for i in v["inline"]}
    return tuple(sorted(words - {"load"}))  # `load` alone is any loader's name


@lru_cache(maxsize=1)
def _build_words() -> tuple[str, ...]:
    """The literal each alternative of `_builds` starts with."""
    return (*_vocab_build_words(), "cpp_extension", "setuptools", "distutils", "setup")


def _builds_cuda(text: str) -> bool:
    """`_builds().search(text) is not None`, asked where its words occur: every match starts with
    one, and the pattern's leading `\b` made the engine try every offset (1.0 s on vLLM's 49 MB of
    Python, against 0.1 s for the searches of the words)."""
    match = _builds().match
    for word in _build_words():
        at = text.find(word)
        while at >= 0:
            if match(text, at) is not None:
                return True
            at = text.find(word, at + 1)
    return False


def _holds_flag(ctx: PassContext, node: ast.List | ast.Tuple) -> bool:
    values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if not values or len(values) != len(node.elts):
        return False
    return any(v.startswith("-") and translate_flag(v, nxt, ctx.options.arch_map) is not None
               for v, nxt in zip(values, [*values[1:], None]))


def _list_assignments(module: ast.Module) -> dict[str, ast.AST]:
    """Module-level `name = [...]`: a flag list passed by name."""
    out = {}
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, (ast.List, ast.Tuple)):
            for t in stmt.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = stmt.value
    return out


def _inside(ctx: PassContext, tree: PythonTree, node: ast.Constant) -> tuple[int, int] | None:
    """The span of a simple string literal's contents (no escapes, no implicit concatenation)."""
    s, e = tree.span(node)
    m = _SIMPLE.match(ctx.text[s:e])
    if not m:
        return None
    start = s + len(m.group(1)) + 1
    return start, e - 1


def _key(ctx: PassContext, tree: PythonTree, node: ast.Constant, vocab: dict) -> list[Edit]:
    span = _inside(ctx, tree, node)
    if span is None:
        return []
    return [Edit(*span, vocab["musa"], "compile_args:" + vocab["cuda"], "pytorch-python", "build")]


def _flag_list(ctx: PassContext, tree: PythonTree, lst: ast.List | ast.Tuple, seen: set[int]) -> list[Edit]:
    edits = []
    elts = lst.elts
    removed = 0
    run = None  # the last run of drops: (its first element, the element after it); its edit is the last
    i = 0
    while i < len(elts):
        node = elts[i]
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            i += 1
            continue
        seen.add(id(node))
        span = _inside(ctx, tree, node)
        if span is None:
            i += 1
            continue
        words = node.value.split()
        if len(words) != 1:
            edits.extend(rewrite_words(ctx, *span, origin=ORIGIN))
            i += 1
            continue
        nxt = elts[i + 1] if i + 1 < len(elts) else None
        following = nxt.value if isinstance(nxt, ast.Constant) and isinstance(nxt.value, str) else None
        result = rewrite_word(ctx, node.value, following)
        if result is None:
            i += 1
            continue
        last = elts[i + result.words - 1]
        s, _ = tree.span(node)
        _, e = tree.span(last)
        for diag, args in result.diags:
            ctx.warn(diag, s, end=e, severity=result.severity if diag == "MU6022" else None, origin=ORIGIN, **args)
        if result.words == 2 and last is not None:
            seen.add(id(last))
        if result.new is None:
            # elements dropped one after another go in one edit: each alone would take the comma
            # between them (MinkowskiEngine's `NVCC_FLAGS += ["--expt-relaxed-constexpr",
            # "--expt-extended-lambda"]` made two edits over one comma, and its setup.py failed)
            first = i
            if run is not None and run[1] == i:  # right after the run: nothing came between
                first = run[0]
                edits.pop()
            edits.append(_remove_elements(ctx, tree, elts, first, i + result.words, e))
            run = (first, i + result.words)
            removed += result.words
            i += result.words
            continue
        if result.words == 1:
            edits.append(Edit(*span, result.new, "flag:" + node.value, "build", "flag"))
        else:
            q = ctx.text[span[0] - 1]
            edits.append(Edit(s, e, f"{q}{result.new}{q}", "flag:" + node.value, "build", "flag"))
            removed += 1
        i += result.words
    if isinstance(lst, ast.Tuple) and len(elts) > 1 and len(elts) - removed == 1:
        edits.append(_one_tuple(ctx, tree, lst, edits))
    return edits


_BODIES = ("body", "orelse", "finalbody")


def _appended(stmt: ast.stmt) -> tuple[str, ast.Constant] | None:
    """(list name, string) of a statement `NAME.append("...")`."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append"
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords):
        return None
    arg = call.args[0]
    return (call.func.value.id, arg) if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


def _appended_pairs(ctx: PassContext, tree: PythonTree, seen: set[int]) -> list[Edit]:
    """A flag and its value appended to one list by two statements in a row, the way most
    extension builds collect their architectures (`cc_flag.append("-gencode")` then
    `cc_flag.append("arch=compute_80,code=sm_80")`): the first becomes the MUSA flag and the
    second statement goes, when each stands on its own line(s); otherwise the pair is reported."""
    edits: list[Edit] = []
    for node in tree.nodes:
        for field_name in _BODIES:
            body = getattr(node, field_name, None)
            if not isinstance(body, list):
                continue
            for first, second in pairwise(body):
                a, b = _appended(first), _appended(second)
                if a is None or b is None or a[0] != b[0] or id(a[1]) in seen:
                    continue
                result = rewrite_word(ctx, a[1].value, b[1].value)
                if result is None or result.words != 2:
                    continue
                seen.update((id(a[1]), id(b[1])))
                s, _ = tree.span(a[1])
                _, e = tree.span(b[1])
                pair = _replace_pair(ctx, tree, first, second, a[1], result.new)
                if not pair:
                    ctx.warn("MU6014", s, end=e, construct=f"{a[1].value} {b[1].value}", origin=ORIGIN,
                             why=f"appended by statements that share a line with others; write "
                                 f"{result.new or 'nothing'} in their place by hand")
                    continue
                for diag, args in result.diags:
                    ctx.warn(diag, s, end=e, severity=result.severity if diag == "MU6022" else None,
                             origin=ORIGIN, **args)
                edits.extend(pair)
    return edits


def _replace_pair(ctx: PassContext, tree: PythonTree, first: ast.stmt, second: ast.stmt, flag: ast.Constant,
                  new: str | None) -> list[Edit]:
    """The edits that turn two append statements into one (`new`), or into none (`new` None);
    none at all (the diagnostic stays) unless each statement has its lines to itself."""
    lines = tree.own_lines(first), tree.own_lines(second)
    if None in lines:
        return []  # another statement shares a line: not removed
    drop = [Edit(*lines[1], "", "flag:drop", "build", "flag")]
    if new is None:
        return [Edit(*lines[0], "", "flag:drop", "build", "flag"), *drop]
    inside = _inside(ctx, tree, flag)
    if inside is None:
        return []
    return [Edit(*inside, new, "flag:" + flag.value, "build", "flag"), *drop]


def _one_tuple(ctx: PassContext, tree: PythonTree, lst: ast.Tuple, edits: list[Edit]) -> Edit:
    """A tuple left with one element keeps a trailing comma, or `("-O3")` would be a string."""
    kept = [e for e in lst.elts if not any(x.start <= tree.span(e)[0] < x.end or
                                             (x.start == tree.span(e)[0] and x.replacement) for x in edits)]
    end = tree.span(kept[0])[1] if kept else max(x.end for x in edits if x.replacement)
    return Edit(end, end, ",", "flag:tuple", "build", "flag")


def _remove_elements(ctx: PassContext, tree: PythonTree, elts: list, first: int, stop: int, end: int) -> Edit:
    """Remove elts[first:stop] with the comma after them; an element alone on its line takes the
    line with it, and a comment after it stays where it was."""
    start = tree.span(elts[first])[0]
    text = ctx.text
    after = re.compile(r"[ \t]*,[ \t]*").match(text, end)
    if after is not None:
        line_start = text.rfind("\n", 0, start) + 1
        stop_at = after.end()
        if text[line_start:start].strip() == "" and text.startswith(("\n", "\r\n"), stop_at):
            return Edit(line_start, text.index("\n", stop_at) + 1, "", "flag:drop", "build", "flag")
        return Edit(start, stop_at, "", "flag:drop", "build", "flag")
    if first > 0:
        prev_end = tree.span(elts[first - 1])[1]
        if text[prev_end:start].strip() == ",":
            return Edit(prev_end, end, "", "flag:drop", "build", "flag")
    return Edit(start, end, "", "flag:drop", "build", "flag")


def _libraries(ctx: PassContext, tree: PythonTree, lst: ast.List | ast.Tuple) -> list[Edit]:
    edits = []
    for node in lst.elts:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (lib := library_rename(node.value)):
            span = _inside(ctx, tree, node)
            if span:
                edits.append(Edit(*span, lib["musa"], "library:" + node.value, "build", "library"))
                if lib.get("guess"):
                    ctx.warn("MU6021", span[0], flag=node.value, musa=lib["musa"], origin=ORIGIN)
    return edits


def _plain_string(ctx: PassContext, tree: PythonTree, node: ast.Constant, builds: bool) -> list[Edit]:
    """Paths, variables and source-file names in any other string literal; flags only in a file
    that builds CUDA code (`builds`)."""
    value = node.value
    if not value or len(value) > 4096 or value.isspace() or " " in value or "\t" in value or (not builds and value.startswith("-")):
        return []  # (a word with a blank is no build word: most strings, whose text is not even looked at)
    if not may_rewrite_word(value):
        return []  # (what `rewrite_word` would say, found by one search: most of the rest)
    span = _inside(ctx, tree, node)
    if span is None:
        return []
    result = rewrite_word(ctx, value, None)
    if result is None:
        return []
    if result.new is None or result.words != 1:  # an nvcc-only flag outside a list: not removable here
        ctx.warn("MU6014", span[0], end=span[1], construct=value, origin=ORIGIN,
                 why="an nvcc flag mcc does not take, outside a flag list; remove it")
        return []
    for diag, args in result.diags:
        ctx.warn(diag, span[0], end=span[1], origin=ORIGIN, **args)
    if result.new == value:
        return []
    return [Edit(*span, result.new, "string:" + value, "build", "path")]
