"""Structural facts for the record: kernel definitions and `<<<...>>>` launches.

Both are found lexically (exact on the scanner's code map); each launch statement is then parsed
with tree-sitter-cuda, so a launch the syntax tree cannot read is reported (MU0007) rather than
counted blindly. No edits: launches keep their syntax on MUSA.
"""

from __future__ import annotations

from musify.engine.edits import Edit
from musify.frontend import syntax
from musify.frontend.launches import find_kernel_defs, find_launches
from musify.passes._base import PassContext


def run(ctx: PassContext) -> list[Edit]:
    codemap = ctx.scan.code_map()
    kernels = find_kernel_defs(ctx.text, codemap, ctx.lines)
    launches = find_launches(ctx.text, codemap, ctx.lines)
    snippets = [ctx.text[launch.start:launch.args_end] + ";" for launch in launches]
    # one parse for all the file's launches; only when that fails is each parsed on its own,
    # to say which one tree-sitter cannot read
    together = syntax.parse_statement("\n".join(snippets)) if launches else None
    if together is not None and together.ok and syntax.count_nodes(together.root, "kernel_call_syntax") == len(launches):
        parsed = len(launches)
    else:
        parsed = 0
        for launch, snippet in zip(launches, snippets):
            tree = syntax.parse_statement(snippet)
            if tree.ok and syntax.count_nodes(tree.root, "kernel_call_syntax"):
                parsed += 1
            else:
                ctx.warn("MU0007", launch.start, launch.kernel, construct=f"the launch of '{launch.kernel}'")
    ctx.facts["kernels"] = len(kernels)
    ctx.facts["launches"] = len(launches)
    ctx.facts["launches_parsed"] = parsed
    return []
