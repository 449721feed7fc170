"""A file's recorded edits in compact form: the run record's edit list without a dict per edit.

Record v2 lists every edit of every file as `{start: [line, col], end: [line, col], old, new,
rule, library, kind, category, inferred}`. Kept as Python dicts, one edit costs about 500 bytes;
a 50 MB file has over a million edits and a 100 MB tree more than half a million, so the dicts
alone were most of a run's peak memory. `PackedEdits` keeps the four positions in an integer
array and the six strings as indices into a table of distinct strings (about 40 bytes an edit),
pickles as those arrays (the process pool and the incremental cache carry it cheaply), reads as
a sequence of the same dicts, and writes its JSON in pieces, byte for byte what
`json.dumps(list_of_dicts, separators=(",", ":"))` writes.
"""

from __future__ import annotations

import json
import sys
from array import array
from collections.abc import Iterator, Sequence

_FIELDS = ("old", "new", "rule", "library", "kind", "category")
_STRS = len(_FIELDS)
# one edit's JSON, exactly as the C encoder writes the dict with separators (",", ":")
_TEMPLATE = ('{"start":[%d,%d],"end":[%d,%d],"old":%s,"new":%s,"rule":%s,"library":%s,'
             '"kind":%s,"category":%s,"inferred":%s}')
CHUNK = 8192  # edits per JSON piece: a huge file's list is never one string


def _shared(s):
    """One copy of each string however many files' tables hold it (a run of 40,000 files holds
    "cudaMalloc" once, not once per file, including in a parent that unpickled each table)."""
    return sys.intern(s) if type(s) is str else s


def _extend(a: array, values: tuple[int, ...]) -> array:
    """`a` with `values` added, as an 8-byte array once a value no longer fits in 4."""
    try:
        a.extend(values)
    except OverflowError:
        a = array("q", a[:len(a) - len(a) % 4])
        a.extend(values)
    return a


class PackedEdits(Sequence):
    """An immutable sequence of edit dicts, stored as arrays (see the module docstring)."""

    __slots__ = ("_idx", "_inferred", "_pos", "_table")

    def __init__(self, edits, text: str, position) -> None:
        """`edits`: merged `Edit`s of `text`; `position(offset) -> (line, column)`."""
        pos = array("i")  # 4 bytes a line or column (8 past 2**31: see `_extend`)
        idx = array("i")
        inferred = bytearray()
        table: list[str] = []
        index: dict[str, int] = {}

        def ref(s: str) -> int:
            i = index.get(s)
            if i is None:
                i = index[s] = len(table)
                table.append(_shared(s))
            return i

        for e in edits:
            pos = _extend(pos, position(e.start) + position(e.end))
            idx.extend((ref(text[e.start:e.end]), ref(e.replacement), ref(e.rule), ref(e.library),
                        ref(e.kind), ref(e.category)))
            inferred.append(1 if e.inferred else 0)
        # a slice is an exact-size copy: growing arrays keep up to an eighth more than they hold
        self._pos, self._idx, self._inferred, self._table = pos[:], idx[:], bytes(inferred), table

    def __len__(self) -> int:
        return len(self._inferred)

    def _one(self, i: int) -> dict:
        p = self._pos[4 * i:4 * i + 4]
        s = [self._table[k] for k in self._idx[_STRS * i:_STRS * i + _STRS]]
        return {"start": [p[0], p[1]], "end": [p[2], p[3]], "old": s[0], "new": s[1], "rule": s[2],
                "library": s[3], "kind": s[4], "category": s[5], "inferred": bool(self._inferred[i])}

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._one(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("edit index out of range")
        return self._one(i)

    def __iter__(self) -> Iterator[dict]:
        return (self._one(i) for i in range(len(self)))

    def __eq__(self, other) -> bool:
        if isinstance(other, (PackedEdits, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"PackedEdits({len(self)} edits)"

    def __getstate__(self):
        return self._pos, self._idx, self._inferred, self._table

    def __setstate__(self, state) -> None:
        self._pos, self._idx, self._inferred, table = state
        self._table = [_shared(s) for s in table]

    def iter_json(self, chunk: int = CHUNK) -> Iterator[str]:
        """The JSON array in pieces (their concatenation is the whole array)."""
        quoted = [json.dumps(s) for s in self._table]
        pos, idx, inferred = self._pos, self._idx, self._inferred
        n = len(self)
        yield "["
        for lo in range(0, n, chunk):
            parts = []
            for i in range(lo, min(n, lo + chunk)):
                p, s = 4 * i, _STRS * i
                parts.append(_TEMPLATE % (pos[p], pos[p + 1], pos[p + 2], pos[p + 3], quoted[idx[s]],
                                          quoted[idx[s + 1]], quoted[idx[s + 2]], quoted[idx[s + 3]],
                                          quoted[idx[s + 4]], quoted[idx[s + 5]],
                                          "true" if inferred[i] else "false"))
            yield ("," if lo else "") + ",".join(parts)
        yield "]"
