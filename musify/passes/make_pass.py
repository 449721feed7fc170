"""Makefiles and shell build scripts: `nvcc` -> `mcc`, arch flags through the arch policy, CUDA
libraries and install paths, `CUDA_HOME`, and `.cu` pattern rules and file lists that follow the
file renames. Comments are never touched (musify/frontend/make.py finds them); `-Xcompiler` and
every word the vocabulary (`rules/build/toolchain.toml`) does not name are kept as written.
"""

from __future__ import annotations

from musify.engine.edits import Edit
from musify.passes._base import PassContext
from musify.passes.build_files import rewrite_words


def run(ctx: PassContext) -> list[Edit]:
    segments = ctx.scan.tree
    if not isinstance(segments, list):
        return []
    edits: list[Edit] = []
    for start, end in segments:
        if end > start and not ctx.text[start:end].isspace():
            edits.extend(rewrite_words(ctx, start, end, origin="pass:make"))
    return [e._replace(category="build") for e in edits]
