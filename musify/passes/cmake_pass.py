"""CMake: the CUDA language, FindCUDA and FindCUDAToolkit to their MUSA forms.

MUSA has no CMake language; its documented forms are FindMUSA (`find_package(MUSA)` on the
`${MUSA_HOME}/cmake` module path, `musa_add_executable`/`musa_add_library`, `MUSA_MCC_FLAGS`) and
FindMUSAToolkit (`MUSA::musart`). So `project(... LANGUAGES CUDA)` and `enable_language(CUDA)`
become FindMUSA (MU6040), and plain targets with `.cu` sources in such a project become
`musa_add_*` targets (a best guess, MU6021). Flags, install paths and source lists inside any
argument go through the shared build-word rules (`build_files.py`). The vocabulary is
`rules/build/cmake.toml`; bracket arguments and comments are never edited.
"""

from __future__ import annotations

import re
from functools import lru_cache

from musify.engine.edits import Edit
from musify.frontend.cmake import Arg, CMakeTree, Command
from musify.passes._base import PassContext
from musify.passes.build_files import (
    is_arch_list,
    is_source_reference,
    not_translated,
    rewrite_words,
    translate_arch_list,
    translate_flag,
    warn_change,
)
from musify.rules.vocab import cmake_vocab, records

ORIGIN = "pass:cmake"
LIBRARY = "cmake"


@lru_cache(maxsize=1)
def _tables() -> dict:
    v = cmake_vocab()
    names = {r["cuda"]: r for r in records(v, "variable") + records(v, "target")}
    namespaces = sorted({r["cuda"].split("::")[0] + "::" for r in records(v, "target")})
    alternatives = sorted(map(re.escape, names), key=len, reverse=True)
    alternatives += [re.escape(ns) + r"\w+" for ns in namespaces]  # any other target: kept, reported
    pattern = re.compile(r"(?<![\w:])(" + "|".join(alternatives) + r")(?![\w])")
    return {
        "language": v["language"],
        "packages": {r["cuda"]: r for r in records(v, "package")},
        "commands": {r["cuda"].lower(): r for r in records(v, "command")},
        "names": names,
        "pattern": pattern,
    }


def run(ctx: PassContext) -> list[Edit]:
    tree = ctx.scan.tree
    if not isinstance(tree, CMakeTree):
        return []
    if tree.error:
        ctx.warn("MU6044", tree.error_offset, cause=tree.error, origin=ORIGIN)
        return []
    t = _tables()
    lang = t["language"]["cuda"]
    state = {"inserted": t["language"]["package"] in ctx.text,
             "module_path": t["language"]["module_path"] in ctx.text,
             "gpu_language": any(_enables_language(c, lang) for c in tree.commands),
             "source_vars": _source_variables(tree.commands)}
    edits: list[Edit] = []
    for cmd in tree.commands:
        name = cmd.lower
        if name == "project":
            edits.extend(_project(ctx, cmd, state))
        elif name == "enable_language" and any(a.value == lang for a in cmd.args):
            edits.extend(_enable_language(ctx, cmd, state))
        elif name == "find_package" and cmd.args and cmd.args[0].value in t["packages"]:
            edits.extend(_find_package(ctx, cmd, state))
        else:
            edits.extend(_command(ctx, cmd, state))
    return [e._replace(category="build") for e in edits]


def _source_variables(commands: list[Command]) -> set[str]:
    """Variables that `set(...)`/`list(APPEND ...)` fill with CUDA source files."""
    out = set()
    for cmd in commands:
        args = cmd.args[1:] if cmd.lower == "set" else cmd.args[2:] if cmd.lower == "list" else []
        if args and any(is_source_reference(a.value) for a in args):
            out.add(cmd.args[1].value if cmd.lower == "list" else cmd.args[0].value)
    return out


def _names_sources(cmd: Command, state: dict) -> bool:
    """The command's arguments name CUDA sources, directly or through a source variable."""
    if any(is_source_reference(a.value) for a in cmd.args):
        return True
    return any("${" + v + "}" in a.value for a in cmd.args for v in state["source_vars"])


def _enables_language(cmd: Command, lang: str) -> bool:
    if cmd.lower == "project":
        return any(a.kind == "unquoted" and a.value == lang for a in cmd.args[1:])
    return cmd.lower == "enable_language" and any(a.value == lang for a in cmd.args)


def _line_end(text: str, pos: int) -> tuple[int, str]:
    eol = text.find("\n", pos)
    if eol < 0:
        return len(text), "\n"
    if eol > 0 and text[eol - 1] == "\r":
        return eol - 1, "\r\n"
    return eol, "\n"


def _indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    return re.match(r"[ \t]*", text[start:]).group()


def _findmusa_lines(ctx: PassContext, state: dict, indent: str, newline: str) -> str:
    lines = []
    language = _tables()["language"]
    if not state["module_path"]:
        lines.append(language["module_path"])
        state["module_path"] = True
    if not state["inserted"]:
        lines.append(language["package"])
        state["inserted"] = True
    return (newline + indent).join(lines)


def _project(ctx: PassContext, cmd: Command, state: dict) -> list[Edit]:
    lang = _tables()["language"]["cuda"]
    hits = [a for a in cmd.args[1:] if a.kind == "unquoted" and a.value == lang]
    if not hits:
        return []
    edits = []
    has_cxx = any(a.value == "CXX" for a in cmd.args[1:])
    for a in hits:
        if has_cxx:
            back = a.start
            while back > cmd.open + 1 and ctx.text[back - 1] in " \t":
                back -= 1
            edits.append(Edit(back, a.end, "", "cmake:LANGUAGES " + lang, LIBRARY, "language"))
        else:
            edits.append(Edit(a.start, a.end, "CXX", "cmake:LANGUAGES " + lang, LIBRARY, "language"))
            has_cxx = True
    eol, newline = _line_end(ctx.text, cmd.close)
    lines = _findmusa_lines(ctx, state, _indent(ctx.text, cmd.start), newline)
    if lines:
        edits.append(Edit(eol, eol, newline + _indent(ctx.text, cmd.start) + lines, "cmake:FindMUSA", LIBRARY,
                          "language"))
    ctx.warn("MU6040", hits[0].start, end=hits[0].end, what=f"{cmd.name}(... {lang})", origin=ORIGIN)
    return edits


def _enable_language(ctx: PassContext, cmd: Command, state: dict) -> list[Edit]:
    lang = _tables()["language"]["cuda"]
    ctx.warn("MU6040", cmd.start, end=cmd.close + 1, what=f"{cmd.name}({lang})", origin=ORIGIN)
    if len(cmd.args) != 1 or cmd.gaps:
        return []
    _, newline = _line_end(ctx.text, cmd.close)
    lines = _findmusa_lines(ctx, state, _indent(ctx.text, cmd.start), newline)
    return [Edit(cmd.start, cmd.close + 1, lines, "cmake:enable_language", LIBRARY, "language")]


def _find_package(ctx: PassContext, cmd: Command, state: dict) -> list[Edit]:
    first = cmd.args[0]
    rule = _tables()["packages"][first.value]
    edits = [Edit(first.start, first.end, rule["musa"], "cmake:find_package " + rule["cuda"], LIBRARY, "package")]
    if rule.get("module_path") and not state["module_path"]:
        _, newline = _line_end(ctx.text, cmd.close)
        state["module_path"] = True
        edits.append(Edit(cmd.start, cmd.start, _tables()["language"]["module_path"] + newline
                          + _indent(ctx.text, cmd.start), "cmake:module_path", LIBRARY, "package"))
    if rule["musa"] == "MUSA":
        state["inserted"] = True
    if len(cmd.args) > 1 and re.fullmatch(r"\d+(?:\.\d+)*", cmd.args[1].value):
        version = cmd.args[1]
        edits.append(Edit(first.end, version.end, "", "cmake:find_package version", LIBRARY, "package"))
        ctx.warn("MU6045", version.start, end=version.end, version=version.value, package=first.value,
                 origin=ORIGIN)
    if rule.get("guess"):
        ctx.warn("MU6021", first.start, end=first.end, flag=first.value, musa=rule["musa"], origin=ORIGIN)
    return edits


def _command(ctx: PassContext, cmd: Command, state: dict) -> list[Edit]:
    edits: list[Edit] = []
    rule = _tables()["commands"].get(cmd.lower)
    if rule is not None:
        edits.extend(_rename_command(ctx, cmd, rule, state))
    if cmd.args and cmd.lower == "set" and _tables()["names"].get(cmd.args[0].value, {}).get("diag") == "MU6043":
        arch = _architectures(ctx, cmd)
        return edits + ([arch] if arch is not None else [])
    if cmd.args and cmd.lower == "set" and is_arch_list(cmd.args[0].value.removeprefix("ENV{").removesuffix("}")):
        edits.extend(rewrite_words(ctx, cmd.args[0].start, cmd.args[0].end, hook=_names, origin=ORIGIN))
        return edits + _arch_list(ctx, cmd)
    _language_property(ctx, cmd)
    for start, end in _regions(cmd):
        edits.extend(rewrite_words(ctx, start, end, hook=lambda w: _names(w), origin=ORIGIN))
    return edits


def _rename_command(ctx: PassContext, cmd: Command, rule: dict, state: dict) -> list[Edit]:
    if rule.get("sources_only") and not (state["gpu_language"] and _names_sources(cmd, state)):
        return []
    if "musa" not in rule:
        ctx.warn(rule.get("diag", "MU6042"), cmd.start, end=cmd.start + len(cmd.name), name=cmd.name, origin=ORIGIN)
        return []
    if rule.get("guess"):
        ctx.warn("MU6021", cmd.start, end=cmd.start + len(cmd.name), flag=cmd.name, musa=rule["musa"], origin=ORIGIN)
    return [Edit(cmd.start, cmd.start + len(cmd.name), rule["musa"], "cmake:" + rule["cuda"], LIBRARY, "command")]


def _architectures(ctx: PassContext, cmd: Command) -> Edit | None:
    """`set(CMAKE_CUDA_ARCHITECTURES 80 86)` -> `list(APPEND MUSA_MCC_FLAGS --offload-arch=mp_22)`."""
    name = cmd.args[0].value
    values = [v for a in cmd.args[1:] for v in a.value.split(";") if v]
    numbers = [v.removesuffix("-real").removesuffix("-virtual") for v in values]
    if not numbers or cmd.gaps or not all(n.isdigit() for n in numbers):
        ctx.warn("MU6043", cmd.args[0].start, end=cmd.args[0].end, name=name,
                 done="kept as written: set the MUSA architecture with --offload-arch=mp_XX in MUSA_MCC_FLAGS",
                 origin=ORIGIN)
        return None
    flags = []
    policies = []
    for n in numbers:
        change = translate_flag(f"-arch=sm_{n}", None, ctx.options.arch_map)
        if change is None or change.replacement is None or "policy" not in change.args:
            return None
        flags.extend(f for f in change.replacement.split() if f not in flags)
        policies.append(change.args["policy"])
    flags_var = next(r["musa"] for r in _tables()["names"].values() if r.get("flags") and not r.get("guess"))
    new = f"list(APPEND {flags_var} {' '.join(flags)})"
    ctx.warn("MU6043", cmd.start, end=cmd.close + 1, name=name,
             done=f"rewritten to '{new}' (this project's best guess): {'; '.join(dict.fromkeys(policies))}",
             origin=ORIGIN)
    return Edit(cmd.start, cmd.close + 1, new, "cmake:" + name, LIBRARY, "arch")


def _arch_list(ctx: PassContext, cmd: Command) -> list[Edit]:
    """`set(TORCH_CUDA_ARCH_LIST "8.0;8.6")` (or `ENV{...}`): the value, one argument before any
    CACHE or PARENT_SCOPE, as TORCH_MUSA_ARCH_LIST's (`translate_arch_list`); MU6025 otherwise."""
    values = []
    for a in cmd.args[1:]:
        if a.kind == "unquoted" and a.value in ("CACHE", "PARENT_SCOPE"):
            break
        values.append(a)
    if not values:
        return []
    arg = values[0]
    if len(values) > 1 or arg.kind == "bracket":
        change = not_translated(arg.value, "a value written over several arguments is not translated"
                                if len(values) > 1 else "a bracket argument is never edited")
    else:
        change = translate_arch_list(arg.value, ctx.options.arch_map)
    warn_change(ctx, change, arg.start, arg.end, ORIGIN)
    if change.replacement == arg.value:
        return []
    inside = (arg.start + 1, arg.end - 1) if arg.kind == "quoted" else (arg.start, arg.end)
    return [Edit(*inside, change.replacement, "cmake:" + cmd.args[0].value, LIBRARY, "arch")]


def _language_property(ctx: PassContext, cmd: Command) -> None:
    """`LANGUAGE CUDA` on source files: no MUSA form (the files build through musa_add_*)."""
    lang = _tables()["language"]["cuda"]
    for a, b in zip(cmd.args, cmd.args[1:]):
        if a.value == "LANGUAGE" and b.value == lang:
            ctx.warn("MU6042", a.start, end=b.end, name=f"LANGUAGE {lang}", origin=ORIGIN)
    generator = f"COMPILE_LANGUAGE:{lang}"
    for a in cmd.args:
        if generator in a.value and a.kind != "bracket":
            ctx.warn("MU6042", a.start, end=a.end, name=f"$<{generator}>", origin=ORIGIN)


def _regions(cmd: Command) -> list[tuple[int, int]]:
    """Runs of non-bracket arguments with no comment between them."""
    out: list[tuple[int, int]] = []
    run: list[Arg] = []
    gaps = sorted(cmd.gaps)

    def flush() -> None:
        if run:
            out.append((run[0].start, run[-1].end))
            run.clear()
    for a in cmd.args:
        if a.kind == "bracket" or (run and any(run[-1].end <= g[0] < a.start for g in gaps)):
            flush()
            if a.kind == "bracket":
                continue
        run.append(a)
    flush()
    return out


def _names(word: str) -> tuple[str, list[tuple[str, dict]]]:
    """CMake variables and imported targets inside one word (`${CUDA_LIBRARIES}`, `CUDA::cudart`)."""
    t = _tables()
    diags: list[tuple[str, dict]] = []

    def sub(m: re.Match[str]) -> str:
        rule = t["names"].get(m.group(1), {"diag": "MU6042"})
        if "musa" not in rule:
            diags.append((rule.get("diag", "MU6042"), {"name": m.group(1),
                                                       "done": "kept as written: set the MUSA architecture with "
                                                               "--offload-arch=mp_XX in MUSA_MCC_FLAGS"}))
            return m.group(1)
        if rule.get("guess"):
            diags.append(("MU6021", {"flag": m.group(1), "musa": rule["musa"]}))
        return rule["musa"]
    return t["pattern"].sub(sub, word), diags
