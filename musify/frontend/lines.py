"""Offset -> (line, column) for a file's text: the positions of edits and diagnostics.

Moved out of `scanner.py` (a scan does not need it); the scanner re-exports `LineIndex` and
`line_starts_python`. The line starts come from the compiled scanner (`_cscan.line_starts`) where
it is built, `line_starts_python` being its reference.
"""

from __future__ import annotations

import bisect
from array import array
from functools import partial
from itertools import accumulate

from musify.frontend import compiled

_NATIVE = compiled.load("_cscan")
# `line_count` without the line starts: the newlines counted 16 bytes at a time (`str.count`
# reads about five instructions a byte), or None: `str.count`, the reference
_COUNT = getattr(compiled.load("_crecord", "musify"), "line_count", None)


def line_starts_python(text: str) -> list[int]:
    """Offsets where lines start (0, then after each newline): `_cscan.line_starts` in Python."""
    lengths = [len(line) + 1 for line in text.split("\n")]
    lengths.pop()
    return list(accumulate(lengths, initial=0))


_ARRAY_FROM = 1 << 16


class LineIndex:
    """Offset -> (line, column), both 1-based; columns count characters. The line starts are
    found when a position is first asked for: most files of a big tree (three in four of the
    CUDA headers) have no edit and no finding, and need only their line count."""

    # slots, not an instance dictionary (made for each file): `made` is the line starts once
    # made, else None, read without making them (an unset `_starts` slot reaches `__getattr__`)
    __slots__ = ("_starts", "_text", "made")

    def __init__(self, text: str):
        self._text = text
        self.made = None

    def __getattr__(self, name: str):
        """`_starts`, made on first use (only a missing attribute comes here: the unset slot)."""
        if name != "_starts":
            raise AttributeError(name)
        text = self._text
        starts = _NATIVE.line_starts(text) if _NATIVE is not None else line_starts_python(text)
        # a file of a million lines: 8 bytes a line in an array rather than 36 in a list of ints
        self._starts = self.made = starts if len(starts) < _ARRAY_FROM else array("q", starts)
        return self._starts

    def position(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self._starts, offset) - 1
        return i + 1, offset - self._starts[i] + 1

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)

    def positions(self, offsets) -> list[tuple[int, int]]:
        """`position` of each of `offsets`, the searches made by `map` (no Python call each)."""
        starts = self._starts
        lines = list(map(partial(bisect.bisect_right, starts), offsets))
        return [(i, o - starts[i - 1] + 1) for i, o in zip(lines, offsets)]

    def named_positions(self, named: list[tuple[int, str]]) -> list[tuple[str, int, int]]:
        """(name, line, column) for each (offset, name) of `named` (a file's uses of unrecognised
        names): one compiled call where built, which counts the newlines between the offsets
        rather than making the line table (`named_positions_python` is the reference)."""
        if _NATIVE is not None:
            got = _NATIVE.named_positions(self._text, named)
            if got is not None:
                return got
        return self.named_positions_python(named)

    def named_positions_python(self, named: list[tuple[int, str]]) -> list[tuple[str, int, int]]:
        """`named_positions` in one Python loop over the line table: no list of the offsets or of
        their positions made first."""
        starts = self._starts
        find = bisect.bisect_right
        out = []
        add = out.append
        for offset, name in named:
            i = find(starts, offset)
            add((name, i, offset - starts[i - 1] + 1))
        return out

    @property
    def line_count(self) -> int:
        starts = self.made
        if starts is not None:
            return len(starts)
        return _COUNT(self._text) if _COUNT is not None else self._text.count("\n") + 1  # (a start after each)
