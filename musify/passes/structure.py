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
    parsed = 0
    for launch in launches:
        snippet = ctx.text[launch.start:launch.args_end] + ";"
        tree = syntax.parse_statement(snippet)
        if tree.ok and syntax.find_nodes(tree.root, "kernel_call_syntax"):
            parsed += 1
        else:
            ctx.warn("MU0007", launch.start, launch.kernel, construct=f"the launch of '{launch.kernel}'")
    ctx.facts["kernels"] = len(kernels)
    ctx.facts["launches"] = len(launches)
    ctx.facts["launches_parsed"] = parsed
    return []
