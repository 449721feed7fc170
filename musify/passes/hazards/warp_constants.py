"""A project's own warp-size constant: `#define WARP_SIZE 32`, `constexpr int kWarpSize = 32;`.

Real trees name the warp size once and build on the name: llama.cpp's ggml-cuda defines
`WARP_SIZE 32` in common.cuh and computes `threadIdx.x / WARP_SIZE`, sizes its reductions with
`template<int width = WARP_SIZE>`; vLLM defines it in `csrc/core/cuda_compat.h` (266 uses) and
`kWarpSize = 32` in eight more kernels; flash-attn's layer norm has `THREADS_PER_WARP = 32`. No use
spells 32, so the warp-size pass, which reads the 32s of device functions, finds none of them: the
definition is the one place that says it, and the one line to change. MU2026 is raised there, once
per definition, with the warp-size pass's severity (a warning where warps have 128 lanes).

What counts: a `#define` whose body is 32 (in parentheses or not), or a `const`/`constexpr`
declaration initialised with 32, whose name says warp and size (`warp` with `size`, `thread`,
`lane` or `width`: `WARP_SIZE`, `kWarpSize`, `THREADS_PER_WARP`; not `NUM_WARPS` or
`WARPS_PER_BLOCK`, which count warps), in code, in a file that holds device code (`host_only`:
a SYCL backend's `QK_WARP_SIZE 32` beside the CUDA one is not the port's business). A value that is
not the literal 32 (`warpSize`, `Utils::get_warp_size()`) is the port already.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from musify.arch import WARP_WIDTH
from musify.engine.edits import Edit
from musify.passes._base import PassContext
from musify.passes.hazards.common import warp_severity
from musify.passes.hazards.file_facts import host_only
from musify.passes.literals import holds_any, register
from musify.patterns import lazy_pattern

_WORDS = ("warp", "Warp", "WARP")  # every name that counts holds one
register(*_WORDS)
# one line holding a 32: a definition of a name as 32, from the '#' or the qualifier to the end
_DEFINITION = lazy_pattern(globals(), "_DEFINITION",
    r"(?P<define>#[ \t]*define[ \t]+(?P<macro>\w+)[ \t]+(?P<mparen>\()?[ \t]*32[uU]?[ \t]*(?(mparen)\))[ \t]*(?=$|//|/\*))"
    r"|(?P<decl>\b(?:constexpr|const)\b[^;=(){}\n]*?\b(?P<const>\w+)[ \t]*=[ \t]*(?P<cparen>\()?[ \t]*32[uU]?[ \t]*"
    r"(?(cparen)\))[ \t]*;)")
_DEFINE_AT_LINE_START = lazy_pattern(globals(), "_DEFINE_AT_LINE_START", r"[ \t]*#")
# a 32 (with a suffix, in parentheses) that ends a statement or its line: the end of every definition
_LAST_32 = lazy_pattern(globals(), "_LAST_32", r"32[uU]?[ \t]*\)?[ \t]*(?:;|(?=$|//|/\*))", re.MULTILINE)
_NAME_SIZE = ("size", "thread", "lane", "width")
_NOT_BOUND = frozenset({"lower", "min"})  # a lower bound of 32 holds on a 128-lane warp too
# a name's words: `kMinWarpSize` -> k, Min, Warp, Size; `MINIMAX_WARP_SIZE` -> MINIMAX, WARP, SIZE
_NAME_WORDS = lazy_pattern(globals(), "_NAME_WORDS", r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def triggers(ruleset) -> tuple[str, ...]:
    """Every name that counts holds `warp` in one of its three spellings."""
    return _WORDS


def active(ruleset, options) -> bool:
    """Nothing to say in the MUSA -> CUDA direction (the runner then never calls it)."""
    return not options.reverse


def run(ctx: PassContext) -> list[Edit]:
    if not holds_any(ctx, _WORDS):  # (the runner asks first; a direct caller may not have)
        return []
    found = list(definitions(ctx.text))
    if not found or host_only(ctx):
        return []
    code = ctx.scan.code_map()
    arch = ctx.options.arch
    width = WARP_WIDTH.get(arch, 128)
    severity = warp_severity(arch)
    for start, end, name in found:
        if code.is_code(start):
            expr = " ".join(ctx.text[start:end].split())
            ctx.warn("MU2026", start, name, severity, end=end, origin="pass:warp_constants",
                     expr=expr, arch=arch, width=width)
    return []


def definitions(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, name) of each line's definition of a warp-size name as 32, in text order
    (comments and strings not told apart: the pass asks the code map). Only the lines where a 32
    ends a statement or the line (`_LAST_32`, a search that jumps from one "32" to the next) and
    that hold `define` or `const` and a warp are read in full."""
    read_to = -1  # the end of the last line read: each line is looked at once, from its first such 32
    for last in _LAST_32.finditer(text):
        at = last.start()
        if at < read_to:
            continue  # (a line with two such 32s; a minified file's one line with thousands)
        line = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        read_to = end = len(text) if end < 0 else end
        if (text.find("define", line, end) < 0 and text.find("const", line, end) < 0) \
                or (text.find("arp", line, end) < 0 and text.find("ARP", line, end) < 0):
            continue
        for m in _DEFINITION.finditer(text, line, end):
            if m.group("define") is not None and not _DEFINE_AT_LINE_START.fullmatch(text, line, m.start() + 1):
                continue  # a '#' inside the line (a string's, a stringizing one's): no directive
            name = m.group("macro") or m.group("const")
            if warp_size_name(name):
                yield (m.start() if m.group("define") is not None else _declaration_start(text, line, m.start())), \
                    m.end(), name


def _declaration_start(text: str, line: int, qualifier: int) -> int:
    """Where the declaration whose `const`/`constexpr` is at `qualifier` starts on its line: its
    type may come first (`uint32_t constexpr kWARP_SIZE = 32U;`, CUTLASS's `static int const
    kWarpSize = 32;`), after the line's last ';', '{' or '}' before it and the blanks."""
    start = max(text.rfind(";", line, qualifier), text.rfind("{", line, qualifier), text.rfind("}", line, qualifier)) + 1
    start = max(start, line)
    while start < qualifier and text[start] in " \t":
        start += 1
    return start


def warp_size_name(name: str) -> bool:
    """The name says a warp's size: `warp` and one of size, thread, lane or width (`kWarpSize`,
    `THREADS_PER_WARP`, `warp_width`), not a count of warps (`NUM_WARPS`, `WARPS_PER_BLOCK`) nor a
    lower bound (PyTorch's `C10_WARP_SIZE_LOWER_BOUND 32`, a `MIN_WARP_SIZE`: still true of a
    128-lane warp)."""
    lower = name.lower()
    if "warp" not in lower or not any(word in lower for word in _NAME_SIZE):
        return False
    return _NOT_BOUND.isdisjoint(word.lower() for word in _NAME_WORDS.findall(name))
