"""Values of the compiled rules file as marshal holds them, and a name index read a bucket at a time.

Two ways to keep a table of the compiled rules (`musify/rules/compact.py`):

  * `pack`/`unpack`: a whole value, laid out so that reading it back makes few objects: a
    collection of strings as one string split at NUL, a dict of name -> tuple column by column
    (a column of strings as one string, a column of a few values as one byte each, a column equal
    to the keys as nothing), strings that are all rule names as their numbers;
  * `write_buckets`/`Buckets`: name -> value as a hash table on disk: each name's bucket (by
    CRC-32 of its UTF-8, the same in every process) is a small marshal string, decoded when a name
    in it is asked for. A run that asks for a few dozen names reads a few dozen buckets and never
    builds the table.
"""

from __future__ import annotations

import marshal
from array import array
from itertools import repeat
from zlib import crc32

_SEP = "\0"  # between packed strings (a list is kept when some string holds one)
_FEW = 256  # at most this many distinct values: a column is stored as one byte per value
_PER_BUCKET = 4  # names per bucket, on average


def bucket_of(name: str, mask: int) -> int:
    return crc32(name.encode("utf-8", "surrogatepass")) & mask


def write_buckets(items: list[tuple[str, object]]) -> tuple[bytes, bytes]:
    """(the buckets back to back, their start offsets as a native array of `I`) for name -> value
    pairs (marshal-able values); a power of two of buckets, `_PER_BUCKET` names in each on average."""
    count = 1
    while count * _PER_BUCKET < len(items):
        count *= 2
    buckets: list[tuple[list[str], list]] = [([], []) for _ in range(count)]
    for name, value in items:
        names, values = buckets[bucket_of(name, count - 1)]
        names.append(name)
        values.append(value)
    starts, parts, at = array("I", [0]), [], 0
    for names, values in buckets:
        data = marshal.dumps((tuple(names), tuple(values))) if names else b""
        parts.append(data)
        at += len(data)
        starts.append(at)
    return b"".join(parts), starts.tobytes()


class Buckets:
    """The name -> value table `write_buckets` wrote, read from `blob` and `starts` (buffers: a
    slice of the mapped file, and its `I` array cast to integers) one bucket per look-up."""

    __slots__ = ("_blob", "_mask", "_starts")

    def __init__(self, blob: memoryview, starts: memoryview) -> None:
        self._blob = blob
        self._starts = starts
        self._mask = len(starts) - 2

    def get(self, name: str, default=None):
        b = crc32(name.encode("utf-8", "surrogatepass")) & self._mask
        start, end = self._starts[b], self._starts[b + 1]
        if start == end:
            return default
        names, values = marshal.loads(self._blob[start:end])
        return values[names.index(name)] if name in names else default


def pack_strings(strings: list[str]) -> tuple[int, str | list[str]]:
    """(count, the strings joined by NUL), or (count, the list) when one of them holds a NUL."""
    joined = _SEP.join(strings)
    return len(strings), (joined if joined.count(_SEP) == len(strings) - 1 or not strings else list(strings))


def unpack_strings(packed: tuple[int, str | list[str]]) -> list[str]:
    count, strings = packed
    if isinstance(strings, list):
        return strings
    return strings.split(_SEP) if count else []


def pack(value: object, numbers: dict[str, int] | None = None) -> tuple:
    """A derived table as marshal can hold it, smaller and faster to read back than marshal's own
    form of it: dicts of name -> tuple by column, collections of strings as one string, or, when
    they are all rule names (`numbers`: name -> its place in the names list), as their places."""
    numbers = numbers or {}
    kind = type(value)
    if kind in _COLLECTIONS and _all_str(value):
        return "strings", kind.__name__, _pack_names(sorted(value) if kind in (set, frozenset) else list(value), numbers)
    if kind is tuple:
        return "tuple", tuple(pack(item, numbers) for item in value)
    if kind is dict and value and _all_str(value) and _rows(value.values()):
        keys = list(value)
        return "table", _pack_names(keys, numbers), tuple(_pack_column(list(col), keys) for col in zip(*value.values()))
    marshal.dumps(value)  # raises ValueError for what marshal cannot hold: a table to store differently
    return "value", value


def unpack(packed: tuple, names: list[str] | None = None) -> object:
    """`pack`'s value back: equal, and of the same types (a set is a set, for the run to add to);
    `names` is the names list the `numbers` of `pack` numbered."""
    how = packed[0]
    if how == "strings":
        return _KINDS[packed[1]](_unpack_names(packed[2], names))
    if how == "tuple":
        return tuple(unpack(item, names) for item in packed[1])
    if how == "table":
        keys = _unpack_names(packed[1], names)
        if not packed[2]:  # rows of no columns
            return dict.fromkeys(keys, ())
        return dict(zip(keys, zip(*[_unpack_column(column, keys) for column in packed[2]])))
    return packed[1]


def _pack_names(strings: list[str], numbers: dict[str, int]) -> tuple:
    """Strings that are all rule names as their numbers (the loaded names list's own string
    objects are used again, not copies), else as strings."""
    if strings and all(s in numbers for s in strings):
        places = array("I" if len(numbers) < 2**32 else "Q", [numbers[s] for s in strings])
        return "numbers", places.typecode, places.tobytes()
    return "strings", pack_strings(strings)


def _unpack_names(packed: tuple, names: list[str] | None) -> list[str]:
    if packed[0] == "numbers":
        places = array(packed[1])
        places.frombytes(packed[2])
        return list(map(names.__getitem__, places))  # type: ignore[union-attr]
    return unpack_strings(packed[1])


_COLLECTIONS = {set: set, frozenset: frozenset, list: list, tuple: tuple}
_KINDS = {kind.__name__: kind for kind in _COLLECTIONS}
_SIMPLE = (str, bool, int, type(None))  # equal values of one of these types are interchangeable


def _all_str(items) -> bool:
    return all(type(item) is str for item in items)


def _rows(values) -> bool:
    """Whether `values` are tuples of one length (the rows of a table)."""
    return len({len(v) if type(v) is tuple else -1 for v in values}) == 1 and type(next(iter(values))) is tuple


def _pack_column(values: list, keys: list[str]) -> tuple:
    if values == keys:
        return ("keys",)
    kind = type(values[0])
    if kind in _SIMPLE and all(type(v) is kind for v in values):
        few = list(dict.fromkeys(values))
        if len(few) == 1:
            return "same", few[0]
        if len(few) <= _FEW:
            codes = {v: i for i, v in enumerate(few)}
            return "few", tuple(few), bytes(codes[v] for v in values)
    if _all_str(values):
        return "strings", pack_strings(values)
    return "values", values


def _unpack_column(column: tuple, keys: list[str]):
    how = column[0]
    if how == "keys":
        return keys
    if how == "same":
        return repeat(column[1], len(keys))
    if how == "few":
        return map(column[1].__getitem__, column[2])
    if how == "strings":
        return unpack_strings(column[1])
    return column[1]
