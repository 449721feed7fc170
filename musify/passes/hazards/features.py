"""Dynamic parallelism: kernel launches and device-wide synchronisation inside device code.

Texture and surface references, programmatic dependent launch, the tensor memory accelerator and
thread block clusters are reported by the identifier pass: their rule records carry the diagnostic
(`diag: MU2031`, `MU2033`, `MU2034`, `MU2036`), so each use gets exactly one finding. What no single
name shows is where a launch or a synchronisation happens: `<<<` inside a `__global__`/`__device__`
body, or a call of a name the rules tag `device-sync`, is dynamic parallelism, which MUSA does not
document (MU2032).
"""

from __future__ import annotations

from musify.engine.edits import Edit
from musify.frontend.scanner import Ctx
from musify.passes._base import PassContext
from musify.passes.hazards.common import enclosing
from musify.passes.hazards.file_facts import device_functions_found, device_functions_of, qualifier_triggers
from musify.passes.literals import holds, register
from musify.patterns import lazy_pattern

_KERNEL_BEFORE = lazy_pattern(globals(), "_KERNEL_BEFORE", r"([A-Za-z_][\w:]*(?:\s*<[^;{}<>]*>)?)\s*$")
register("<<<")
# each finding is in a device function's body (`report`): not called on a file without a qualifier word
triggers = qualifier_triggers


def run(ctx: PassContext) -> list[Edit]:
    wanted, idents = ctx.ruleset.tagged("device-sync"), ctx.scan.idents
    # `select`'s own first test, asked without the call (most files use no such name)
    syncs = [] if wanted.isdisjoint(idents.names) else idents.select(wanted, (Ctx.CODE,))
    if not syncs and not (holds(ctx, "<<<") and (device_functions_found(ctx) or _launch_in_code(ctx))):
        return []  # nothing to place inside a device function: they are not even looked for
    return report(ctx, syncs)


def _launch_in_code(ctx: PassContext) -> bool:
    """Some `<<<` starts in code (headers mention them in comments), as `report` looks for them."""
    text = ctx.text
    at = text.find("<<<")
    codemap = ctx.scan.code_map()
    while at >= 0:
        if codemap.is_code(at):
            return True
        at = text.find("<<<", at + 1)
    return False


def report(ctx: PassContext, syncs: list) -> list[Edit]:
    """MU2032 at each launch in a device function's body and each of `syncs` (the code uses of
    names tagged `device-sync`) inside one; `run` without its test for either."""
    text = ctx.text
    functions = device_functions_of(ctx)
    rows = functions.rows()  # (start, body start, end, ...) a function
    if not rows:
        return []
    codemap = ctx.scan.code_map()
    # most files launch from host code only: no '<<<' between the first body and the last end,
    # so none in any body (their functions are not even read)
    if holds(ctx, "<<<") and text.find("<<<", min(rows[1::6]), max(rows[2::6])) >= 0:
        for fn in functions:  # only device bodies are searched: linear in their size
            at = text.find("<<<", fn.body_start, fn.end)
            while at >= 0:
                if codemap.is_code(at):
                    m = _KERNEL_BEFORE.search(text, max(fn.body_start, at - 200), at)
                    kernel = m.group(1) if m else "?"
                    ctx.warn("MU2032", m.start(1) if m else at, kernel, what=f"launch of '{kernel}'",
                             func=fn.name, origin="pass:features")
                at = text.find("<<<", at + 3, fn.end)
    for ident in syncs:
        fn = enclosing(functions, ident.start)
        if fn is not None:
            ctx.warn("MU2032", ident.start, ident.name, what=f"{ident.name}()", func=fn.name,
                     origin="pass:features")
    return []
