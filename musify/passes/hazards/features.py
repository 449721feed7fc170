"""Dynamic parallelism: kernel launches and device-wide synchronisation inside device code.

Texture and surface references, programmatic dependent launch, the tensor memory accelerator and
thread block clusters are reported by the identifier pass: their rule records carry the diagnostic
(`diag: MU2031`, `MU2033`, `MU2034`, `MU2036`), so each use gets exactly one finding. What no single
name shows is where a launch or a synchronisation happens: `<<<` inside a `__global__`/`__device__`
body, or a call of a name the rules tag `device-sync`, is dynamic parallelism, which MUSA does not
document (MU2032).
"""

from __future__ import annotations

import re

from musify.engine.edits import Edit
from musify.frontend.scanner import Ctx
from musify.passes._base import PassContext
from musify.passes.hazards.common import enclosing
from musify.passes.hazards.file_facts import device_functions_of

_KERNEL_BEFORE = re.compile(r"([A-Za-z_][\w:]*(?:\s*<[^;{}<>]*>)?)\s*$")


def run(ctx: PassContext) -> list[Edit]:
    functions = device_functions_of(ctx)
    if not functions:
        return []
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
                             func=fn.name, origin="pass:features")
                at = text.find("<<<", at + 3, fn.end)
    syncs = ctx.ruleset.tagged("device-sync")
    for ident in ctx.scan.idents.select(syncs, (Ctx.CODE,)):
        fn = enclosing(functions, ident.start)
        if fn is not None:
            ctx.warn("MU2032", ident.start, ident.name, what=f"{ident.name}()", func=fn.name,
                     origin="pass:features")
    return []
