"""A file's recorded edits in compact form: the run record's edit list without a dict per edit.

Record v2 lists every edit of every file as `{start: [line, col], end: [line, col], old, new,
rule, library, kind, category, inferred}`. Kept as Python dicts, one edit costs about 500 bytes;
a 50 MB file has over a million edits, so the dicts alone were most of a run's peak memory.

`PackedEdits` is made once per file, where the file was migrated (in the worker under `-j`),
straight from the engine's compact `EditList` (positions by bulk bisection, each distinct field
tuple and each distinct replaced text quoted once), and for most files it is the record's JSON
text of the list at once: the parent of a `-j` run, and the record dump of any run, then only
splice that text (no per-edit work in the serial part of a run), and it pickles as one string.
A file with more than `RENDER_MAX` edits keeps the rows as integer arrays and a table of distinct
strings instead (about 40 bytes an edit against 180 of JSON) and is rendered, by the same
function, in pieces of `CHUNK` edits when the record is written. Either way it reads as the
sequence of the same dicts, and its JSON is byte for byte what
`json.dumps(list_of_dicts, separators=(",", ":"))` writes (`tests/test_packed_edits.py`).
"""

from __future__ import annotations

import json
import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from json.encoder import encode_basestring_ascii
from operator import ne
from typing import TYPE_CHECKING

from musify.classes import named_tuple
from musify.engine.edits import EditList

if TYPE_CHECKING:
    from musify.frontend.scanner import LineIndex

_HEAD = '{"start":[%d,%d],"end":[%d,%d],"old":%s,%s'  # the last: the tail of the edit's fields
CHUNK = 8192  # edits per JSON piece of a big file's list: never one string
RENDER_MAX = 32768  # a file with more edits keeps them as arrays (rendered when written)


def _shared(s):
    """One copy of each string however many files' tables hold it (a run of 40,000 files holds
    "cudaMalloc" once, not once per file, including in a parent that unpickled each table)."""
    return sys.intern(s) if type(s) is str else s


def tail_json(fields: tuple) -> str:
    """The JSON after `old` of every edit with these fields (replacement, rule, library, kind,
    inferred, category): `"new":...,"rule":...,...,"inferred":...}`. Remembered across files (a
    run's renames repeat the same few hundred field tuples in file after file)."""
    tail = _TAILS.get(fields)
    if tail is None:
        tail = tails((fields,))[0]
        if len(_TAILS) >= _REMEMBER:
            _TAILS.clear()
        _TAILS[fields] = tail
    return tail


def tails(fields: Iterable[tuple]) -> list[str]:
    """`tail_json` of each field tuple, made in one loop and not remembered here (the run's memo
    of field tuples, `runner._count_new`, keeps them: 10,750 new tuples on the CUDA headers, each
    half a dozen calls when made one by one). The replacement and the rule differ from tuple to
    tuple: quoted as they are; the labels after them repeat: remembered (`_quoted`)."""
    label = _QUOTED.get
    out = []
    for new, rule, library, kind, inferred, category in fields:
        out.append(f'"new":{_QUOTE(new) if type(new) is str else json.dumps(new)},'
                   f'"rule":{_QUOTE(rule) if type(rule) is str else json.dumps(rule)},'
                   f'"library":{label(library) or _quoted(library)},"kind":{label(kind) or _quoted(kind)},'
                   f'"category":{label(category) or _quoted(category)},"inferred":{"true" if inferred else "false"}}}')
    return out


def _quoted(s: str) -> str:
    """`json.dumps(s)`, remembered across files (names and library labels repeat): the very
    function `dumps` quotes a string with, called directly (no encoder made per string)."""
    q = _QUOTED.get(s)
    if q is None:
        q = _quote(s)
        if len(_QUOTED) >= _REMEMBER:
            _QUOTED.clear()
        _QUOTED[s] = q
    return q


def _quote(s: str) -> str:
    """`json.dumps(s)`, not remembered."""
    return _QUOTE(s) if type(s) is str else json.dumps(s)


_QUOTE = encode_basestring_ascii  # what json.dumps(a str) returns (ensure_ascii, its default)
_TAILS: dict[tuple, str] = {}
_QUOTED: dict[str, str] = {}
_REMEMBER = 1 << 16  # entries each memo keeps at most (cleared when full: a bound, not an LRU)


def _rendered(text: str, starts, ends, fids, fields: list[tuple], position, at_start) -> str:
    """The JSON list of these edits in one pass (the rows `_render` formats, made edit by edit
    without a tuple each): an end is on its start's line unless the text it replaces holds a
    newline."""
    tails = list(map(tail_json, fields))
    memo = _QUOTED
    out = []
    add = out.append
    for (line, col), s, e, f in zip(at_start, starts, ends, fids):
        old = text[s:e]
        quoted = memo.get(old) or _quoted(old)
        if "\n" in old:
            end_line, end_col = position(e)
        else:
            end_line, end_col = line, col + e - s
        add(f'{{"start":[{line},{col}],"end":[{end_line},{end_col}],"old":{quoted},{tails[f]}')
    return "[" + ",".join(out) + "]"


def _render(rows: Iterable[tuple]) -> str:
    """Edits as (start line, start col, end line, end col, quoted old, tail) joined by commas."""
    return ",".join(map(_HEAD.__mod__, rows))


class PackedEdits(Sequence):
    """An immutable sequence of edit dicts, held as their JSON or as arrays (see the module
    docstring)."""

    __slots__ = ("_fid", "_fields", "_json", "_n", "_old", "_olds", "_pos")

    def __init__(self, edits, text: str, position, at_start: list[tuple[int, int]] | None = None) -> None:
        """`edits`: merged `Edit`s of `text` (an `EditList` is read without making them);
        `position(offset) -> (line, column)`; `at_start`: the positions of the edits' starts,
        when the caller has them already."""
        starts, ends, fids, fields = _columns(edits)
        n = self._n = len(starts)
        if n <= RENDER_MAX:
            if at_start is None:
                at_start = list(map(position, starts))
            self._json = _rendered(text, starts, ends, fids, fields, position, at_start)
            self._pos = self._old = self._fid = self._olds = self._fields = None
            return
        # a big file: CHUNK edits at a time, so no list of a million strings or positions is made
        self._json = None
        index: dict[str, int] = {}
        self._old, self._pos = array("i"), array("i")
        for lo in range(0, n, CHUNK):
            olds, at_start, at_end = _places(text, starts[lo:lo + CHUNK], ends[lo:lo + CHUNK], position, None)
            self._old = _extend(self._old, [index.setdefault(o, len(index)) for o in olds])
            self._pos = _extend(self._pos, list(chain.from_iterable(a + b for a, b in zip(at_start, at_end))))
        self._olds = [_shared(o) for o in index]
        self._fid = _extend(array("i"), list(fids))
        self._fields = [tuple(map(_shared, f)) for f in fields]

    @classmethod
    def of_json(cls, n: int, text: str) -> PackedEdits:
        """The `n` edits whose JSON list is `text`."""
        edits = cls.__new__(cls)
        edits._n, edits._json = n, text
        edits._pos = edits._old = edits._fid = edits._olds = edits._fields = None
        return edits

    def text(self) -> str | None:
        """The whole list's JSON when it is held as one string (None: a big file's arrays)."""
        return self._json

    def __len__(self) -> int:
        return self._n

    def _decoded(self, lo: int = 0, hi: int | None = None) -> list[dict]:
        return json.loads("".join(self.iter_json(lo=lo, hi=hi)))

    def __getitem__(self, i):
        if isinstance(i, slice):
            lo, hi, step = i.indices(self._n)
            return self._decoded(lo, max(lo, hi))[::step] if step > 0 else self._decoded()[i]
        n = self._n
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("edit index out of range")
        return self._decoded(i, i + 1)[0]

    def __iter__(self) -> Iterator[dict]:
        for lo in range(0, self._n, CHUNK):  # one piece's dicts at a time
            yield from self._decoded(lo, min(self._n, lo + CHUNK))

    def __eq__(self, other) -> bool:
        if isinstance(other, (PackedEdits, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PackedEdits({self._n} edits)"

    def __getstate__(self):
        if self._json is not None:
            return self._n, self._json
        return self._n, self._pos, self._old, self._olds, self._fid, self._fields

    def __setstate__(self, state) -> None:
        self._n, *rest = state
        if len(rest) == 1:
            self._json, = rest
            self._pos = self._old = self._fid = self._olds = self._fields = None
            return
        self._json = None
        self._pos, self._old, olds, self._fid, fields = rest
        self._olds = [_shared(s) for s in olds]
        self._fields = [tuple(map(_shared, f)) for f in fields]

    def iter_json(self, chunk: int = CHUNK, lo: int = 0, hi: int | None = None) -> Iterator[str]:
        """The JSON array (of edits `lo` to `hi`) in pieces (their concatenation is the array)."""
        hi = self._n if hi is None else hi
        if self._json is not None:
            if lo == 0 and hi == self._n:
                yield self._json
            else:  # a part of a rendered list: only readers ask for one (never the record)
                whole = json.loads(self._json)[lo:hi]
                yield json.dumps(whole, separators=(",", ":"))
            return
        quoted = list(map(_quoted, self._olds))
        tails = list(map(tail_json, self._fields))
        pos, old, fid = self._pos, self._old, self._fid
        yield "["
        for at in range(lo, hi, chunk):
            top = min(hi, at + chunk)
            p = pos[4 * at:4 * top]
            rows = zip(p[0::4], p[1::4], p[2::4], p[3::4], map(quoted.__getitem__, old[at:top]),
                       map(tails.__getitem__, fid[at:top]))
            yield ("," if at > lo else "") + _render(rows)
        yield "]"


def _columns(edits) -> tuple[Sequence[int], Sequence[int], Sequence[int], list[tuple]]:
    """Starts, ends, field-tuple indices and the distinct field tuples of `edits`."""
    if isinstance(edits, EditList):
        a = edits._a
        return a[0::3], a[1::3], a[2::3], edits._fields.values
    index: dict[tuple, int] = {}
    starts, ends, fids = [], [], []
    for e in edits:
        starts.append(e[0])
        ends.append(e[1])
        fids.append(index.setdefault(tuple(e[2:]), len(index)))
    return starts, ends, fids, list(index)


def _places(text: str, starts, ends, position, at_start) -> tuple[list[str], list, list]:
    """The replaced texts and the (line, column) of the starts and ends of these edits: an end
    is on its start's line unless the text it replaces holds a newline."""
    olds = [text[s:e] for s, e in zip(starts, ends)]
    if at_start is None:
        at_start = list(map(position, starts))
    at_end = [(a[0], a[1] + e - s) if "\n" not in o else position(e)
              for a, s, e, o in zip(at_start, starts, ends, olds)]
    return olds, at_start, at_end


def _extend(a: array, values: list[int]) -> array:
    """`a` with `values` added, as an 8-byte array once some value does not fit in 4."""
    kept = len(a)
    try:
        a.extend(values)
    except OverflowError:  # the values before the one that overflowed went in: start again from `kept`
        a = array("q", a[:kept])
        a.extend(values)
    return a


@named_tuple
class Summary:
    """What a file's record entry says of its merged edits."""

    edits: PackedEdits | None  # None when the record is lite
    counts: list[int]  # per field tuple of the `EditList`'s table: how many edits have it
    lines_touched: int  # distinct lines where an edit starts
    bytes_changed: int  # bytes of original text replaced


def summarise(edits: EditList, text: str, lines: LineIndex, ascii: bool, render: bool) -> Summary:
    """The packed edits (when `render`) and the statistics of `edits`, merged edits of `text`;
    `ascii`: a character of `text` is a byte of the file. (`_crecord.record` does this and the
    counting in one pass where it is built: this is its reference.)"""
    counts = [0] * len(edits._fields.values)
    for f, c in Counter(edits._a[2::3]).items():
        counts[f] = c
    starts = edits.column(0)
    # distinct lines where an edit starts (edits are sorted: count the changes of line)
    if len(edits) <= RENDER_MAX:  # their positions are made once, for this and the record
        at_start = lines.positions(starts)
        touched = [line for line, _ in at_start]
    else:  # a big file: no list of a million positions (the record makes them a chunk at a time)
        at_start = None
        touched = array("q", map(lines.line_of, starts))
    if ascii:  # characters are bytes
        replaced = sum(edits.column(1)) - sum(starts)
    else:
        replaced = sum(len(text[s:e].encode("utf-8", "surrogateescape")) for s, e in edits.spans())
    packed = PackedEdits(edits, text, lines.position, at_start) if render else None
    return Summary(packed, counts, 1 + sum(map(ne, touched, touched[1:])) if touched else 0, replaced)
