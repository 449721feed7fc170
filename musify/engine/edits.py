"""Byte-span edits: every pass returns them, the runner merges them once and applies them.

An edit is a span of the decoded text and its replacement. Two passes editing overlapping spans
is a bug in the rules or the passes, never something to resolve by guessing, so `merge` raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple


class Edit(NamedTuple):  # a NamedTuple: cheap to make by the thousand, hashable, ordered
    start: int
    end: int
    replacement: str
    rule: str  # the rule or pass that asked for it, e.g. "cudaMalloc" or "include:cuda_runtime.h"
    library: str = ""
    kind: str = ""
    inferred: bool = False
    # what the edit is, for the statistics: "reference" (a renamed use of a rule's name),
    # "include" (an #include path rewritten), "shim-include" (a compat header added), "arch-guard"
    category: str = "reference"


class OverlappingEdits(AssertionError):
    """Two edits touch the same text: a bug in the passes, reported loudly."""


def merge(edits: list[Edit]) -> list[Edit]:
    """Sort edits and check that none overlap; identical duplicates are collapsed."""
    out: list[Edit] = []
    for e in sorted(set(edits), key=lambda e: (e.start, e.end, e.replacement)):
        if e.start > e.end:
            raise OverlappingEdits(f"edit with negative span: {e}")
        if out and e.start < out[-1].end:
            raise OverlappingEdits(f"overlapping edits: {out[-1]} and {e}")
        out.append(e)
    return out


def apply(text: str, edits: list[Edit]) -> str:
    """Apply merged edits; text outside them is copied unchanged."""
    return "".join(apply_pieces(text, edits))


def apply_pieces(text: str, edits: list[Edit], per_piece: int = 4096) -> Iterator[str]:
    """`apply` in pieces of `per_piece` edits each (their concatenation is the new text), so a
    file with a million edits is never a million small strings at once."""
    pos = 0
    for lo in range(0, len(edits), per_piece):
        parts = []
        for e in edits[lo:lo + per_piece]:
            parts.append(text[pos:e.start])
            parts.append(e.replacement)
            pos = e.end
        yield "".join(parts)
    yield text[pos:]
