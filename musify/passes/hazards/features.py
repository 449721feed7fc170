"""CUDA features with no MUSA counterpart: texture/surface references, dynamic parallelism and
Hopper-only features (programmatic dependent launch, TMA, thread block clusters).

One diagnostic per use, each saying the effort and what to do instead (MUSA_FACTS section 2).
Names a rule already reports with the same diagnostic are left to the identifier pass, so a use
is never reported twice. cuDNN is reported through its rule records (`diag: MU2030`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from musify.engine.edits import Edit
from musify.frontend.scanner import Ctx
from musify.passes._base import PassContext
from musify.passes.hazards.common import enclosing
from musify.passes.hazards.file_facts import device_functions_of

_NAMES = (
    (re.compile(r"cudaGridDependencySynchronize|cudaTriggerProgrammaticLaunchCompletion|"
                r"cudaLaunchAttributeProgrammatic\w+|CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC\w+"), "MU2033"),
    (re.compile(r"cuTensorMapEncode\w*|cuTensorMapReplace\w*|CUtensorMap\w*|CU_TENSOR_MAP_\w+"), "MU2034"),
    (re.compile(r"cuda\w*Cluster\w*|CU_LAUNCH_ATTRIBUTE_CLUSTER\w*|CU_FUNC_ATTRIBUTE_\w*CLUSTER\w*|"
                r"cu\w*Cluster\w*"), "MU2036"),
)
_TEXREF_CALLS = frozenset({
    "cudaBindTexture", "cudaBindTexture2D", "cudaBindTextureToArray", "cudaBindTextureToMipmappedArray",
    "cudaUnbindTexture", "cudaGetTextureReference", "cudaGetTextureAlignmentOffset",
    "cudaBindSurfaceToArray", "cudaGetSurfaceReference",
})
_TEXREF_DECL = re.compile(r"(?<![\w:.])(texture|surface)\s*<")
_CLUSTER_WORDS = re.compile(r"(?<![\w.])(__cluster_dims__|this_cluster|cluster_group|cluster_shape)(?!\w)")
_KERNEL_BEFORE = re.compile(r"([A-Za-z_][\w:]*(?:\s*<[^;{}<>]*>)?)\s*$")
_USES = frozenset({Ctx.CODE, Ctx.MACRO, Ctx.DIRECTIVE})


def run(ctx: PassContext) -> list[Edit]:
    _names(ctx)
    _lexical(ctx)
    _dynamic_parallelism(ctx)
    return []


# Every name _classify can match contains one of these; a file with none of them skips the loop.
_NAME_HINTS = ("Programmatic", "PROGRAMMATIC", "GridDependency", "ensorMap", "TENSOR_MAP", "luster",
               "LUSTER", "Texture", "Surface")


def _names(ctx: PassContext) -> None:
    if not any(hint in ctx.text for hint in _NAME_HINTS):
        return
    names = ctx.ruleset.names
    for ident in ctx.scan.idents:
        if ident.ctx not in _USES:
            continue
        name = ident.name
        diag = _classify(name)
        if diag is None:
            continue
        if diag == "MU2031":
            ctx.warn("MU2031", ident.start, name, what="texture/surface reference call")
            continue
        rule = names.get(name)
        if rule is None or rule.diag != diag:
            ctx.warn(diag, ident.start, name)


@lru_cache(maxsize=65536)
def _classify(name: str) -> str | None:
    """The feature diagnostic a name raises, if any (names repeat, so the answer is memoised)."""
    if name in _TEXREF_CALLS:
        return "MU2031"
    for pattern, diag in _NAMES:
        if pattern.fullmatch(name):
            return diag
    return None


def _lexical(ctx: PassContext) -> None:
    text = ctx.text
    codemap = ctx.scan.code_map()
    if "texture" in text or "surface" in text:
        for m in _TEXREF_DECL.finditer(text):
            if codemap.is_code(m.start()):
                ctx.warn("MU2031", m.start(), m.group(1), what=f"{m.group(1)} reference declaration")
    if "cluster" in text:
        for m in _CLUSTER_WORDS.finditer(text):
            if codemap.is_code(m.start()):
                ctx.warn("MU2036", m.start(), m.group(1))


def _dynamic_parallelism(ctx: PassContext) -> None:
    functions = device_functions_of(ctx)
    if not functions:
        return
    text = ctx.text
    codemap = ctx.scan.code_map()
    if "<<<" in text:
        for fn in functions:  # only device bodies are searched: linear in their size
            at = text.find("<<<", fn.body_start, fn.end)
            while at >= 0:
                if codemap.is_code(at):
                    m = _KERNEL_BEFORE.search(text, max(fn.body_start, at - 200), at)
                    kernel = m.group(1) if m else "?"
                    ctx.warn("MU2032", m.start(1) if m else at, kernel, what=f"launch of '{kernel}'",
                             func=fn.name)
                at = text.find("<<<", at + 3, fn.end)
    for ident in ctx.scan.idents:
        if ident.name == "cudaDeviceSynchronize" and ident.ctx == Ctx.CODE:
            fn = enclosing(functions, ident.start)
            if fn is not None:
                ctx.warn("MU2032", ident.start, ident.name, what="cudaDeviceSynchronize()", func=fn.name)
