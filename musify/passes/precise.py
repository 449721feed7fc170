"""The precise-mode pass: with `--semantic -p BUILD_DIR`, keep names that refer to the user's own
declarations (`ctx.protect` drops the lexical rename) and report macros that expand to CUDA calls.

Off unless `options.semantic` is set. Any missing piece gives one MU3001 note and leaves
the file to the lexical engine.
"""

from __future__ import annotations

import os

from musify.engine.edits import Edit
from musify.frontend.scanner import Ctx
from musify.passes._base import PassContext


def active(ruleset, options) -> bool:
    """Off without `--semantic` and in the MUSA -> CUDA direction (the runner then never calls it)."""
    return bool(options.semantic) and not options.reverse


def run(ctx: PassContext) -> list[Edit]:
    if not ctx.options.semantic or ctx.options.reverse:
        return []
    from musify.semantic import compdb
    from musify.semantic.resolve import resolve
    from musify.semantic.toolchain import Unavailable, toolchain

    candidates = [(i.start, i.name) for i in ctx.scan.idents if i.ctx == Ctx.CODE and _renamed(ctx, i.name)]
    try:
        tc = toolchain()
        build_dir = ctx.options.build_dir
        if not build_dir:
            raise Unavailable("no build directory given (-p BUILD_DIR)")
        try:
            entries = compdb.load(os.path.abspath(build_dir))
        except compdb.CompileDatabaseError as exc:
            raise Unavailable(str(exc)) from None
        entry = compdb.find(entries, ctx.path, ctx.abspath or None)
        if entry is None:
            raise Unavailable("the file has no entry in compile_commands.json")
        cuda_names = {n for n, r in ctx.ruleset.names.items() if r.replacement and n.startswith(("cu", "CU"))}
        found = resolve(tc, entry.file, ctx.text, compdb.clang_flags(entry), candidates, cuda_names)
    except Unavailable as exc:
        ctx.warn("MU3001", 0, cause=str(exc))
        return []
    names = dict(candidates)
    for offset, where in sorted(found.user_decls.items()):
        name = names[offset]
        ctx.protect(offset, offset + len(name))
        ctx.warn("MU3002", offset, name, where=where)
    for offset, macro, where, calls in found.macro_calls:
        ctx.warn("MU3003", offset, macro, where=where, calls=", ".join(calls))
    ctx.facts["semantic_user_decls"] = len(found.user_decls)
    return []


def _renamed(ctx: PassContext, name: str) -> bool:
    rule = ctx.ruleset.names.get(name)
    return rule is not None and rule.replacement is not None
