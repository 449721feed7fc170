"""Turn the two pieces of CUDA syntax that no C++ compiler accepts into plain C++.

The emulator headers make every other CUDA keyword a macro; what is left is the launch
`k<<<grid, block, smem, stream>>>(args)` and `extern __shared__ T x[];`. A launch becomes
`::emu::launch_via([&](auto&... a) { k(a...); })(grid, block, smem, stream)(args)`: the kernel is
called from a generic lambda so that its template arguments are deduced from the launch's
arguments as nvcc does, and the configuration and the arguments keep their text and their line
breaks (inside macro bodies too), so line numbers do not move. Files that launch kernels through
`cudaLaunchKernel((void*)k, ...)` also get a registration of each non-template kernel they define,
appended after the last line. A `#line 1` directive
names the original file, so compiler messages and the emulator's barrier reports point at the
user's file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from musify.emu.split import split_edits
from musify.frontend.launches import find_kernel_defs, find_launches
from musify.frontend.scanner import Ctx, scan

_EXTERN_SHARED = re.compile(
    r"(?:\bextern\s+__shared__|\b__shared__\s+extern)\s+"
    r"(?P<type>(?:__align__\s*\([^)]*\)\s*|alignas\s*\([^)]*\)\s*|[\w:<>,*&\s])+?)"
    r"\s*\b(?P<name>[A-Za-z_]\w*)\s*\[\s*\]\s*;"
)
_ALIGN = re.compile(r"(?:__align__|alignas)\s*\([^)]*\)")
_SCOPE_OPENER = re.compile(r"(?:\bnamespace(?:\s+[\w:]+)?|\bextern\s*\"C(?:\+\+)?\")\s*$")
_IN_TEXT = (Ctx.CODE, Ctx.MACRO)


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


def _namespace_scope_offsets(text: str, codemap) -> list[tuple[int, bool]]:
    """Brace events in code: (offset, True when the brace opened a namespace-like scope)."""
    events = []
    stack: list[bool] = []
    for m in re.finditer(r"[{}]", text):
        if codemap.context_at(m.start()) not in _IN_TEXT:
            continue
        if m.group() == "{":
            head = text[max(0, m.start() - 200) : m.start()]
            stack.append(bool(_SCOPE_OPENER.search(head)))
        elif stack:
            stack.pop()
        events.append((m.start(), all(stack)))
    return events


def _at_file_scope(events: list[tuple[int, bool]], pos: int) -> bool:
    """True when `pos` is outside every function and class (only namespaces enclose it)."""
    scope = True
    for offset, namespace_only in events:
        if offset >= pos:
            break
        scope = namespace_only
    return scope


def extern_shared_edits(text: str, codemap) -> list[Edit]:
    """`extern __shared__ T x[];` becomes a pointer to the block's dynamic shared memory."""
    if "__shared__" not in text:
        return []
    events = None
    edits = []
    for m in _EXTERN_SHARED.finditer(text):
        if codemap.context_at(m.start()) not in _IN_TEXT:
            continue
        events = events if events is not None else _namespace_scope_offsets(text, codemap)
        ctype = " ".join(_ALIGN.sub(" ", m.group("type")).split())
        name = m.group("name")
        if _at_file_scope(events, m.start()):
            new = f"static ::emu::DynamicShared<{ctype}> {name};"
        else:
            new = f"{ctype}* const {name} = reinterpret_cast<{ctype}*>(::emu::dynamic_shared());"
        edits.append(Edit(m.start(), m.end(), new + "\n" * m.group().count("\n")))
    return edits


def launch_edits(text: str, codemap) -> list[Edit]:
    edits = []
    for launch in find_launches(text, codemap):
        edits.append(Edit(launch.start, launch.start, "::emu::launch_via([&](auto&... emu_args) { "))
        edits.append(Edit(launch.config_start, launch.config_start + 3, "(emu_args...); })("))
        edits.append(Edit(launch.config_end - 3, launch.config_end, ")"))
    return edits


_LAUNCH_BY_POINTER = re.compile(r"\b(?:cuda|musa)Launch(?:Cooperative)?Kernel\b")
_TEMPLATE_HEAD = re.compile(r"\btemplate\s*<[^;{}]*$")
_NAMESPACE_NAME = re.compile(r"\bnamespace\s+([\w:]+)\s*$")


def kernel_registrations(text: str, codemap) -> str:
    """Registrations of the non-template, non-overloaded kernels this file defines at namespace scope."""
    if not _LAUNCH_BY_POINTER.search(text):
        return ""
    names: dict[str, int] = {}
    for kdef in find_kernel_defs(text, codemap):
        head = text[max(0, kdef.offset - 300) : kdef.offset]
        head = head[max(head.rfind(";"), head.rfind("}"), head.rfind("{")) + 1 :]
        if _TEMPLATE_HEAD.search(head):
            continue
        path = _namespace_path(text, codemap, kdef.offset)
        if path is None:
            continue
        names["::".join([*path, kdef.name])] = names.get("::".join([*path, kdef.name]), 0) + 1
    lines = [f"static const bool emu_registered_{i} = ::emu::register_kernel(&::{name});"
             for i, name in enumerate(sorted(n for n, count in names.items() if count == 1))]
    return "\n" + "\n".join(lines) + "\n" if lines else ""


def _namespace_path(text: str, codemap, pos: int) -> list[str] | None:
    """Names of the namespaces around `pos`; None when a function or class encloses it."""
    stack: list[str | None] = []
    for m in re.finditer(r"[{}]", text[:pos]):
        if codemap.context_at(m.start()) not in _IN_TEXT:
            continue
        if m.group() == "{":
            head = text[max(0, m.start() - 200) : m.start()]
            named = _NAMESPACE_NAME.search(head)
            if named:
                stack.append(named.group(1))
            elif _SCOPE_OPENER.search(head):
                stack.append("")
            else:
                stack.append(None)
        elif stack:
            stack.pop()
    if any(name is None for name in stack):
        return None
    return [name for name in stack if name]


def rewrite(text: str, filename: str, split: bool = False) -> str:
    """The plain C++ the emulator compiles for CUDA/MUSA source `text` read from `filename`;
    `split`: eligible kernels with barriers become loops over threads (split.py)."""
    codemap = scan(text).code_map()
    edits = launch_edits(text, codemap) + extern_shared_edits(text, codemap)
    if split:
        edits += [Edit(start, end, new) for start, end, new in split_edits(text, codemap)]
    edits.sort(key=lambda e: (e.start, e.end))
    out = [f'#line 1 "{_c_string(filename)}"\n']
    pos = 0
    for edit in edits:
        if edit.start < pos:
            raise ValueError(f"{filename}: overlapping emulator rewrites at offset {edit.start}")
        out.append(text[pos : edit.start])
        out.append(edit.text)
        pos = edit.end
    out.append(text[pos:])
    out.append(kernel_registrations(text, codemap))
    return "".join(out)


def _c_string(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')
