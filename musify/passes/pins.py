"""requirements*.txt and pyproject.toml: report pins of CUDA-only wheels and indexes.

Nothing is rewritten: there is no one MUSA counterpart to `nvidia-cublas-cu12` or a `+cu121`
index, so each such pin gets MU6030 and the user decides (`rules/build/toolchain.toml`, [pins]).
"""

from __future__ import annotations

import re

from musify.engine.edits import Edit
from musify.passes._base import PassContext
from musify.rules.vocab import toolchain_vocab

_ITEM = re.compile(r"[^\s\"',\[\]{}=]+(?:[=<>!~]=?[^\s\"',\[\]{}]*)?")


def run(ctx: PassContext) -> list[Edit]:
    pins = toolchain_vocab()["pins"]
    packages = tuple(p.lower() for p in pins["packages"])
    local = re.compile(re.escape(pins["local_version"]) + r"\d")
    segments = ctx.scan.tree if isinstance(ctx.scan.tree, list) else [(0, len(ctx.text))]
    for start, end in segments:
        for m in _ITEM.finditer(ctx.text, start, end):
            item = m.group()
            low = item.lower()
            if low.startswith(packages) or local.search(low) or pins["index"] in low:
                ctx.warn("MU6030", m.start(), end=m.end(), pin=item, origin="pass:pins")
    return []
