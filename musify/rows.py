"""Compact sequences of small records: rows of integers in one array, strings in a table.

A huge file has hundreds of thousands of scanner identifiers, edits and device functions. As
Python objects each costs a tuple and two or three integer objects (about 130-200 bytes); here a
row is `WIDTH` integers in one `array` (4 bytes each while they fit, 8 after), and the strings
it names are indices into a table of distinct values. The sequences read like the lists they
replace: indexing and iteration make the record objects (`Ident`, `Edit`, ...) when they are
read, so passes keep their `for x in scan.idents` loops; bulk work (the identifier pass's renames,
the merge) reads the arrays.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence


class Rows(Sequence):
    """`WIDTH` integers per row, row-major in `_a`; a subclass says what a row reads as (`_make`)."""

    __slots__ = ("_a",)
    WIDTH = 1

    def __init__(self, data: array | None = None) -> None:
        self._a = data if data is not None else array("i")

    def _push(self, *values: int) -> None:
        try:
            self._a.extend(values)
        except OverflowError:
            self._widen(values)

    def _widen(self, row: tuple[int, ...]) -> None:
        """Add `row` after a value overflowed 4 bytes: every row goes to 8 bytes a value."""
        a = self._a
        del a[len(a) - len(a) % self.WIDTH:]  # the part of `row` that went in
        self._a = a = array("q", a)
        a.extend(row)

    def _make(self, row: tuple):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _rows(self) -> Iterator[tuple[int, ...]]:
        a, w = self._a, self.WIDTH
        return zip(*(a[k::w] for k in range(w)))

    def column(self, k: int) -> array:
        """Column `k` of every row, as an array (a copy)."""
        return self._a[k::self.WIDTH]

    def __len__(self) -> int:
        return len(self._a) // self.WIDTH

    def __getitem__(self, i):
        if isinstance(i, slice):
            w = self.WIDTH
            lo, hi, step = i.indices(len(self))
            if step != 1:
                return [self[k] for k in range(lo, hi, step)]
            part = self._a[w * lo:w * max(lo, hi)]
            return [self._make(r) for r in zip(*(part[k::w] for k in range(w)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{type(self).__name__} index out of range")
        w = self.WIDTH
        return self._make(tuple(self._a[w * i:w * i + w]))

    def __iter__(self) -> Iterator:
        return map(self._make, self._rows())

    def __eq__(self, other) -> bool:
        if isinstance(other, (Rows, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like the list it stands for

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"

    def nbytes(self) -> int:
        """The rows' own memory (the array), for the memory tests and benchmarks."""
        return self._a.itemsize * len(self._a)


class Table:
    """Distinct values, each stored once, by index (the string columns of a `Rows`)."""

    __slots__ = ("_index", "values")

    def __init__(self, values: list | None = None) -> None:
        self.values: list = values if values is not None else []
        self._index: dict | None = None if self.values else {}

    @property
    def index(self) -> dict:
        """value -> its index (made when first needed: most tables are only read)."""
        if self._index is None:
            self._index = {v: i for i, v in enumerate(self.values)}
        return self._index

    def ref(self, value) -> int:
        index = self.index
        i = index.get(value)
        if i is None:
            i = index[value] = len(self.values)
            self.values.append(value)
        return i
