"""Inline assembly (`asm`, `asm volatile`, `__asm__`): an error for device-side uses (one per device function, its other statements as sites), never a change.

Device assembly is PTX, which does not assemble on MUSA. Disabling it (torchada's `if(0) asm volatile`)
produced silent garbage in a real model (torchada PR #87), so the code is left exactly as written
and the diagnostic carries the fix. Hopper-only instructions inside (wgmma, fp8 MMA) are named too.

Host assembly is not PTX: the host compiler assembles it on a MUSA machine as before (PyTorch's
headers hold POWER VSX and Arm NEON `__asm__` in CPU vector code, and calling those errors made a
clean header tree fail). A use is host assembly when its template shows nothing of PTX (a PTX
opcode or type or state-space suffix, a PTX special register, `.reg`/`.pred`, with the ';' that
ends every PTX instruction: `ptx_sign`), it is outside every
`__device__`/`__global__` function, and it is outside every macro body (where a macro is expanded
is not known) unless the file holds no device code at all: not a `.cu`/`.cuh`/`.mu`/`.muh` file, no
device or kernel qualifier anywhere in its code and no macro the rules tag `device-compilation`
(`__CUDA_ARCH__`, `__CUDACC__`, `__NVCC__`, or their MUSA names: cuda_bf16.hpp qualifies its functions through its own
macros, and its shuffle macro's PTX opcode is a macro argument; PyTorch vendors valgrind.h, whose client-request
macros are x86, Arm, POWER, s390 and MIPS assembly: 178 errors made `torch/utils` fail). Any PTX
sign alone keeps the error, so a device function the analysis cannot see (qualified through a
project macro) still reports its PTX.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from musify.engine.edits import Edit
from musify.passes._base import PassContext
from musify.passes.hazards.common import match_bracket
from musify.passes.hazards.file_facts import device_functions_of, directive_at, host_only, without_comments
from musify.passes.literals import holds, register
from musify.patterns import lazy_pattern

_ASM = lazy_pattern(globals(), "_ASM", r"(?<![\w.])(asm|__asm__|__asm)(\s+(?:volatile|__volatile__)|\s*(?:volatile|__volatile__)(?=\s*\())?\s*\(")
register("asm")
# each with the literals one of which every match contains: the search (which opens with `\b`,
# so the regex engine tries every offset) runs only on bodies holding one
_HOPPER = ((re.compile(r"\bwgmma\."), "warpgroup MMA (wgmma)", ("wgmma.",)),
           (re.compile(r"\bmma\.\S*\.e[45]m[23]\b|\.e4m3\.e4m3|\.e5m2\.e5m2"), "fp8 MMA",
            ("mma.", ".e4m3.e4m3", ".e5m2.e5m2")))
_HOPPER_LITERALS = tuple(dict.fromkeys(literal for _, _, literals in _HOPPER for literal in literals))
# what marks a template as PTX: a special register, a state space or PTX type suffix, rounding
# and sync modifiers, the bare control instructions, a PTX opcode with its first modifier. x86,
# Arm64 and POWER assembly has none of them; Arm32 NEON's `.f32`/`.u8` suffixes, RISC-V vectors'
# `vadd.vv` and Esperanto's `mov.m.x` do match, and are told apart by the ';' (`ptx_sign`)
_PTX = lazy_pattern(globals(), "_PTX", 
    r"%%?(?:laneid|warpid|nwarpid|tid|ntid|ctaid|nctaid|smid|nsmid|gridid|clock(?:64|_hi)?|globaltimer(?:_lo|_hi)?"
    r"|lanemask_(?:eq|le|lt|ge|gt)|dynamic_smem_size|total_smem_size|envreg\d+|pm\d+)\b"
    r"|\.(?:reg|pred|shared|global|local|param|const|b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64"
    r"|f16|f16x2|bf16|bf16x2|s16x2|u16x2|f32|f64|tf32|e4m3|e5m2|sync|aligned|ftz|approx|rn|rz|rm|rp|rni|rzi|rmi"
    r"|rpi|uni|relu)\b"
    r"|\b(?:trap|brkpt|exit|ret|pmevent)\s*;"
    r"|\b(?:mov|ld|ldu|st|cvt|cvta|membar|fence|bar|barrier|shfl|vote|atom|red|prmt|lop3|bfe|bfi|brev|popc|clz"
    r"|setp|selp|mma|wmma|ldmatrix|stmatrix|cp|wgmma|mbarrier|griddepcontrol|elect|redux|match|activemask"
    r"|nanosleep|isspacep|prefetch|discard|createpolicy|applypriority|tcgen05|tensormap|multimem|getctarank"
    r"|mad|fma|rcp|rsqrt|ex2|lg2|dp4a|dp2a|testp|suld|sust|tld4|txq|bra|add|sub|mul|div|rem|min|max|abs|neg"
    r"|and|or|xor|not|shl|shr|sqrt|sin|cos|tanh|copysign|sad|slct|vabsdiff\d?|vadd\d?|vsub\d?|vmin\d?|vmax\d?)"
    r"\.(?![wn]\b)[a-z0-9]")  # not Thumb-2's `.w`/`.n` width suffixes


def ptx_sign(body: str) -> bool:
    """The text `body` shows PTX: a sign of it (`_PTX`) and a ';', which ends every PTX
    instruction (asked of a statement's parentheses, and of them without their comments:
    `_shows_ptx`). The 6,984 statements with a sign in the CUDA 13 headers, flash-attn's CUTLASS,
    vLLM and llama.cpp's ggml-cuda all hold one. Other assemblers end an instruction with a new
    line, and share some of the signs: RISC-V vectors' `vadd.vv`, Esperanto's `mov.m.x`, Arm32
    NEON's `vadd.f32`; and an asm label (`f(...) __asm("llvm.amdgcn...f16")`, a symbol's name, not
    a statement) holds no instruction at all. llama.cpp's RISC-V and Esperanto CPU kernels had 106
    false errors, composable_kernel's asm labels eight a header."""
    return ";" in body and _PTX.search(body) is not None


def _shows_ptx(ctx: PassContext, body: str, start: int, end: int) -> bool:
    """`ptx_sign` of the statement's parentheses (text[start:end], `body`) without their comments,
    which are taken out only where the sign and the ';' are both in the text and a '/' could open a
    comment (the CUDA headers' 3,000 statements outside a device function the pass sees: taking
    their comments out first cost a fifth of the pass)."""
    if not ptx_sign(body):
        return False
    return "/" not in body or ptx_sign(without_comments(ctx, start, end))


def triggers(ruleset) -> tuple[str, ...]:
    """Every use holds "asm" (the runner skips a file without it: `literals.file_bits`)."""
    return ("asm",)


def run(ctx: PassContext) -> list[Edit]:
    """MU2040 once per device function, at its first assembly statement with every other one in
    the diagnostic's `sites` ("+N more in this function", as the warp-size findings), and once
    per statement outside any device function the analysis sees (a macro body, PTX in a function
    qualified through a project macro); MU2035 at each statement with a Hopper-only instruction.
    One error per statement was 850,551 errors on FlashInfer 0.7.4, whose generated kernels hold
    thousands of `asm volatile` statements each: a console no one reads and most of a 1.7 GB run."""
    text = ctx.text
    if not holds(ctx, "asm"):  # every match holds it
        return []
    codemap = ctx.scan.code_map()
    found: list[tuple[int, str, int, tuple[str, ...]]] = []  # offset, spelling, function (-1: none), features
    for m in asm_matches(text):
        if not codemap.is_code(m.start()):
            continue
        close = match_bracket(text, m.end() - 1, codemap)
        body_end = close if close >= 0 else _statement_end(text, m.end())
        body = text[m.end():body_end]
        # the function (found once a file, then a bisection a statement): reported assembly is
        # grouped by it, and assembly outside one, with no PTX, outside a device file's macros, is the host's
        in_function = device_functions_of(ctx).holding(m.start())
        if in_function < 0 and not _shows_ptx(ctx, body, m.end(), body_end) \
                and (directive_at(ctx, m.start()) is None or host_only(ctx)):
            continue  # host assembly: the host compiler's, unchanged on MUSA
        spelled = " ".join(text[m.start():m.end() - 1].split())
        features: tuple[str, ...] = ()
        if any(map(body.__contains__, _HOPPER_LITERALS)):  # most templates hold none: one test for both
            features = tuple(feature for pattern, feature, literals in _HOPPER
                             if any(literal in body for literal in literals) and pattern.search(body))
        found.append((m.start(), spelled, in_function, features))
    _report(ctx, found)
    return []


def _report(ctx: PassContext, found: list[tuple[int, str, int, tuple[str, ...]]]) -> None:
    """The findings in text order: MU2040 at the first statement of each function (the others
    as its sites) and at each statement outside one, MU2035 at each statement it concerns."""
    grouped: dict[int, list[int]] = {}
    for at, _, k, _ in found:
        if k >= 0:
            grouped.setdefault(k, []).append(at)
    for at, spelled, k, features in found:
        sites = grouped[k] if k >= 0 else None
        if sites is None:
            ctx.warn("MU2040", at, spelled)
        elif sites[0] == at:
            ctx.warn("MU2040", at, spelled, sites=tuple(ctx.lines.position(s) for s in sites[1:]))
        for feature in features:
            ctx.warn("MU2035", at, spelled, what=f"'{spelled}' with {feature}", feature=feature)



def asm_matches(text: str) -> Iterator[re.Match[str]]:
    """`_ASM.finditer(text)`, with the pattern tried only where a match can start: at each "asm"
    and two characters before one that follows "__". A search from every offset (the pattern
    opens with a look-behind, which defeats the regex engine's literal scan) cost more than the
    rest of the pass on headers that mention "asm" once."""
    end = 0
    at = text.find("asm")
    while at >= 0:
        for start in ((at - 2, at) if at >= 2 and text.startswith("__", at - 2) else (at,)):
            m = _ASM.match(text, start) if start >= end else None
            if m is not None:
                yield m
                end = m.end()
                break
        at = text.find("asm", at + 1)


def _statement_end(text: str, pos: int) -> int:
    end = text.find(";", pos)
    return len(text) if end < 0 else end
