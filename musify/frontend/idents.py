"""The scanner's candidate identifiers, kept compact: `IdentList`.

A 50 MB file of dense CUDA has over half a million candidate identifiers; as a list of `Ident`
tuples each cost about 190 bytes (the tuple, two integers, its own copy of the name). An
`IdentList` keeps four 4-byte integers a row (start, end, the name's index in a table of
distinct names, the context) and makes the `Ident` when one is read. Both scanners (the
compiled one fills the array directly) build it; `named` answers the hazard passes' "where is
this name used" (`select`) without an `Ident` per identifier of the file.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from enum import IntEnum

from musify.classes import named_tuple
from musify.rows import Rows, Table


class Ctx(IntEnum):
    CODE = 0
    COMMENT = 1
    STRING = 2
    CHAR = 3
    INCLUDE = 4
    DIRECTIVE = 5  # #if/#ifdef/#elif/#undef/#pragma operands
    MACRO = 6  # the replacement text of a #define
    MACRO_NAME = 7  # the name a #define defines


CTXS = tuple(Ctx)


@named_tuple
class Ident:  # what an `IdentList` reads as
    start: int
    end: int
    name: str
    ctx: Ctx


_make_ident = Ident._make


class IdentList(Rows):
    """Identifiers in order, four integers a row (see the module docstring)."""

    __slots__ = ("_contexts", "_names")
    WIDTH = 4

    def __init__(self, data: array | None = None, names: list[str] | None = None, contexts: int | None = None) -> None:
        """`contexts`: the rows' contexts as bits (bit c: some row's context is c), as the compiled
        scanner reports them with the rows it made; None: `holds_context` reads the rows."""
        self._a = data if data is not None else array("i")  # `Rows.__init__`, without its call (one a file)
        self._names = Table(names)
        self._contexts = contexts

    def add(self, start: int, end: int, name: str, ctx: int) -> None:
        self._contexts = None  # (the compiled scanner's bits no longer cover the rows)
        self._push(start, end, self._names.ref(name), int(ctx))

    def append(self, ident: Ident) -> None:
        self.add(*ident)

    def extend(self, idents: Iterable[Ident]) -> None:
        for ident in idents:
            self.add(*ident)

    @property
    def names(self) -> list[str]:
        """The distinct names, in order of first use (a row's third integer indexes it)."""
        return self._names.values

    @property
    def data(self) -> array:
        """The rows (start, end, name index, context), for the compiled identifier pass."""
        return self._a

    def holds_context(self, ctx: int) -> bool:
        """Some row's context is `ctx`: from the compiled scanner's bits where it made the rows (a
        file's passes ask without a copy of the context column: `self_defines` asks every file
        whether it defines a candidate name, which most do not), else from the rows (the
        reference: tests/test_cscan_equivalence.py compares the two)."""
        contexts = self._contexts
        if contexts is None:
            return ctx in self._a[3::4]
        return contexts >> ctx & 1 == 1

    def rows_in(self, ctx: int) -> list[int]:
        """The indices of the rows whose context is `ctx`, in order: a pass that reads a row's
        integers (`data`) makes no `Ident` of the rows it passes over (`self_defines` passes over
        most defined candidates: function-like macros)."""
        a = self._a
        return _rows_holding(a[3::4], {int(ctx)}) if a else []

    def _make(self, row: tuple) -> Ident:
        s, e, n, c = row
        return _make_ident((s, e, self._names.values[n], CTXS[c]))

    def __iter__(self) -> Iterator[Ident]:
        a = self._a
        return map(_make_ident, zip(a[0::4], a[1::4], map(self._names.values.__getitem__, a[2::4]),
                                    map(CTXS.__getitem__, a[3::4])))

    def select(self, names=None, contexts=None) -> list[Ident]:
        """The identifiers whose name is in `names` and whose context is in `contexts` (either
        may be None: any), in order. The distinct names are looked up once, not once per
        identifier, and only the identifiers selected become `Ident`s."""
        a = self._a
        if not a:
            return []  # no identifier (most small files hold no candidate)
        if names is not None:
            if isinstance(names, (set, frozenset)) and names.isdisjoint(self._names.values):
                return []  # none of the names occurs (asked in C: most files hold none of a pass's names)
            ids = {i for i, name in enumerate(self._names.values) if name in names}
            if not ids:
                return []
            keep = _rows_holding(a[2::4], ids)
            if contexts is not None:
                wanted = {int(c) for c in contexts}
                keep = [k for k in keep if a[4 * k + 3] in wanted]
        elif contexts is not None:
            keep = _rows_holding(a[3::4], {int(c) for c in contexts})
        else:
            keep = range(len(self))
        return [self._make(tuple(a[4 * k:4 * k + 4])) for k in keep]


def _rows_holding(column: array, values: set[int]) -> list[int]:
    """The rows whose value in `column` is one of `values`, in order: one `index` search (in C)
    per match, not a Python step per row."""
    out: list[int] = []
    for v in values:
        k = -1
        for _ in range(column.count(v)):
            k = column.index(v, k + 1)
            out.append(k)
    if len(values) > 1:
        out.sort()
    return out
