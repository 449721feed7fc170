"""Byte-span edits: every pass returns them, the runner merges them once and applies them.

An edit is a span of the decoded text and its replacement. Two passes editing overlapping spans
is a bug in the rules or the passes, never something to resolve by guessing, so `merge` raises.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import islice
from operator import itemgetter

from musify.classes import named_tuple
from musify.frontend import compiled
from musify.rows import Rows, Table

# the order check and the apply in C (_cedits.c), or None: the Python below is the reference
_NATIVE = compiled.load("_cedits", "musify.engine")


@named_tuple
class Edit:  # a NamedTuple: cheap to make by the thousand, hashable, ordered
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


_make_edit = Edit._make
_first = itemgetter(0)


class EditList(Rows):
    """Edits in compact form: a row is (start, end, index of the other six fields in a table of
    distinct field tuples), so a million renames of a few names cost 12 bytes each, not the 160
    of an `Edit` tuple and its integers. Reads as `Edit`s; `merge` sorts it without making them."""

    __slots__ = ("_fields",)
    WIDTH = 3

    def __init__(self, data: array | None = None, fields: list[tuple] | None = None) -> None:
        self._a = data if data is not None else array("i")  # `Rows.__init__`, without its call (a list a file)
        self._fields = Table(fields)

    def append(self, edit: Edit) -> None:
        self._push(edit[0], edit[1], self._fields.ref(edit[2:]))

    def extend(self, edits: Iterable[Edit]) -> None:
        if not edits:
            return
        if isinstance(edits, EditList):
            if not self._a:  # the common case: the identifier pass's renames come first
                self._a, self._fields = edits._a[:], Table(list(edits._fields.values))
                return
            ref, a = self._fields.ref, edits._a
            for s, e, f in zip(a[0::3], a[1::3], map(edits._fields.values.__getitem__, a[2::3])):
                self._push(s, e, ref(f))
            return
        for edit in edits:
            self.append(edit)

    def _make(self, row: tuple) -> Edit:
        s, e, f = row
        return _make_edit((s, e, *self._fields.values[f]))

    def __iter__(self) -> Iterator[Edit]:
        a = self._a
        return map(_edit, a[0::3], a[1::3], map(self._fields.values.__getitem__, a[2::3]))

    def spans(self) -> Iterator[tuple[int, int]]:
        """(start, end) of every edit, without making the edits."""
        a = self._a
        return zip(a[0::3], a[1::3])

    def replacements(self) -> Iterator[str]:
        """The replacement of every edit, in order."""
        return map(_first, map(self._fields.values.__getitem__, self._a[2::3]))

    def field_counts(self) -> list[tuple[tuple, int]]:
        """(fields after the span, how many edits have them) for each distinct field tuple: the
        run record's statistics without an `Edit` per edit."""
        values = self._fields.values
        return [(values[f], c) for f, c in sorted(Counter(self._a[2::3]).items())]  # counted in C


def _edit(s: int, e: int, fields: tuple) -> Edit:
    return _make_edit((s, e, *fields))


def merge(edits: Iterable[Edit]) -> EditList:
    """Sort edits and check that none overlap; identical duplicates are collapsed. An `EditList`
    that is already merged comes back as it is (not copied)."""
    if not isinstance(edits, EditList):
        many = EditList()
        many.extend(edits)
        edits = many
    a, fields = edits._a, edits._fields.values
    if len(a) <= 3:  # one edit or none: in order
        if a and a[0] > a[1]:
            raise OverlappingEdits(f"edit with negative span: {edits[0]}")
        return edits
    if _NATIVE is not None:
        if _NATIVE.in_order(a):
            return edits  # in order, no overlap, no duplicate: already merged (`_in_order`, in C)
        found = _NATIVE.merge_rows(a)  # sorted and checked in C unless two edits share a span
        if found is not None:
            rows, problem, i, j = found
            if rows is not None:
                return EditList(rows, list(fields))
            if problem == 0:
                raise OverlappingEdits(f"edit with negative span: {edits[i]}")
            raise OverlappingEdits(f"overlapping edits: {edits[i]} and {edits[j]}")
    elif _in_order(a):
        return edits  # in order, no overlap, no duplicate: already merged
    starts, ends, fids = a[0::3], a[1::3], a[2::3]
    n = len(starts)
    order: Iterable[int] = range(n)
    if any(starts[i] > starts[i + 1] or (starts[i] == starts[i + 1] and ends[i] >= ends[i + 1])
           for i in range(n - 1)):  # not already strictly in order: sort (ties by replacement first)
        order = sorted(range(n), key=lambda i: (starts[i], ends[i], fields[fids[i]]))
    out = EditList(array(a.typecode), list(fields))
    push = out._push
    prev_end = prev = -1
    for i in order:
        s, e = starts[i], ends[i]
        if s > e:
            raise OverlappingEdits(f"edit with negative span: {edits[i]}")
        if prev >= 0 and s == starts[prev] and e == ends[prev] and fields[fids[i]] == fields[fids[prev]]:
            continue  # an identical duplicate
        if s < prev_end:
            raise OverlappingEdits(f"overlapping edits: {edits[prev]} and {edits[i]}")
        push(s, e, fids[i])
        prev, prev_end = i, e
    return out


def _in_order(a: array) -> bool:
    """Whether the rows are merged as they are: each span in order, ending at or before the next
    starts and differing from it (`_cedits.in_order` is this in C: asked once, not again here)."""
    starts, ends = a[0::3], a[1::3]
    return all(s <= e for s, e in zip(starts, ends)) and all(
        e0 <= s1 and (s0 < s1 or e0 < e1) for s0, e0, s1, e1 in zip(starts, ends, starts[1:], ends[1:]))


def apply(text: str, edits: list[Edit]) -> str:
    """Apply merged edits; text outside them is copied unchanged."""
    if _NATIVE is not None and isinstance(edits, EditList) and type(edits._fields.values) is list:
        new = _NATIVE.apply(text, edits._a, edits._fields.values)
        if new is not None:  # None: spans out of order or outside the text, done as below
            return new
    return "".join(apply_pieces(text, edits))


def apply_pieces(text: str, edits: list[Edit], per_piece: int = 4096) -> Iterator[str]:
    """`apply` in pieces of `per_piece` edits each (their concatenation is the new text), so a
    file with a million edits is never a million small strings at once."""
    pos = 0
    if isinstance(edits, EditList) and len(edits) <= per_piece:  # most files: one piece
        if _NATIVE is not None and type(edits._fields.values) is list:
            new = _NATIVE.apply(text, edits._a, edits._fields.values)
            if new is not None:
                yield new
                return
        parts: list[str] = []
        a = edits._a
        for start, end, replacement in zip(a[0::3], a[1::3], edits.replacements()):
            parts += (text[pos:start], replacement)
            pos = end
        parts.append(text[pos:])
        yield "".join(parts)
        return
    if isinstance(edits, EditList):
        pairs = zip(edits.spans(), edits.replacements())
    else:
        pairs = (((e.start, e.end), e.replacement) for e in edits)
    for _ in range(0, len(edits), per_piece):
        parts = []
        for (start, end), replacement in islice(pairs, per_piece):
            parts.append(text[pos:start])
            parts.append(replacement)
            pos = end
        yield "".join(parts)
    yield text[pos:]
