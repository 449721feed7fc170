"""The compiled rule database on disk: read in a few milliseconds, each record decoded when used.

Every run starts by loading the compiled rules. Pickled, the RuleSet took 0.08 s to load (35,000
`Rule` objects and the dicts around them), most of a one-file run's own cost, although such a run
looks up a few dozen names. This format keeps what a run needs at once cheap to read, and the
rest for later:

  * the names (plain and header) as one string each, split at NUL: the tables of `LazyRules`;
  * each record as its own marshal string, back to back in one buffer, with their offsets: a
    record becomes a `Rule` at its name's first look-up (`musify/rules/lazy.py`);
  * the small parts (qualified names, hazard tags, overridden records, the vendor pattern) as
    they are;
  * the tables every run derives from the rules (the scanner's prefixes, the identifier pass's
    plain renames; `musify/rules/derived.py`), stored column by column: a column of strings as
    one string, a column of a few values as one byte each, a column equal to the keys as nothing.

A file is `MAGIC`, the length of the head, the head (one marshal object) and the records. A file
of another format, or one cut short, reads as None: the caller compiles the rules again.
"""

from __future__ import annotations

import marshal
import struct
from array import array
from itertools import repeat

from musify.rules.lazy import LazyRules
from musify.rules.model import Rule, RuleSet, rule_record

MAGIC = b"musify-rules 1\n"
_HEAD = struct.Struct("<QQ")  # the head's length, the records' length
_SEP = "\0"  # between packed strings (a list is kept when some string holds one)
_FEW = 256  # at most this many distinct values: a column is stored as one byte per value


def dump(ruleset: RuleSet, derived: dict[str, object]) -> bytes:
    """The file's bytes for `ruleset` (plain dicts, as compiled) and its derived tables."""
    names, headers = list(ruleset.names), list(ruleset.headers)
    records = [marshal.dumps(rule_record(rule)) for rule in (*ruleset.names.values(), *ruleset.headers.values())]
    starts = array("q", [0])
    for data in records:
        starts.append(starts[-1] + len(data))
    if starts[-1] < 2**32:
        starts = array("I", starts)
    numbers = {name: i for i, name in enumerate(names)}
    head = (
        ruleset.digest, ruleset.vendor_pattern, pack_strings(names), pack_strings(headers),
        starts.typecode, starts.tobytes(),
        {last: [(parts, rule_record(rule)) for parts, rule in entries] for last, entries in ruleset.qualified.items()},
        {tag: tuple(sorted(found)) for tag, found in ruleset.by_hazard.items()},
        [(key, [rule_record(rule) for rule in replaced]) for key, replaced in ruleset.overridden.items()],
        {attr: pack(value, numbers) for attr, value in derived.items()},
    )
    head_bytes = marshal.dumps(head)
    body = b"".join(records)
    return MAGIC + _HEAD.pack(len(head_bytes), len(body)) + head_bytes + body


def load(data) -> RuleSet | None:
    """The RuleSet in `data` (bytes, or a read-only mmap of the file: its records are then read
    from the page cache when their names are first looked up), or None when `data` is not a whole
    file of this format. Its names and headers are `LazyRules`; its derived tables are set as the
    passes cache them."""
    at = len(MAGIC) + _HEAD.size
    if len(data) < at or data[:len(MAGIC)] != MAGIC:
        return None
    head_size, body_size = _HEAD.unpack_from(data, len(MAGIC))
    if len(data) != at + head_size + body_size:
        return None  # cut short (or grown): never decoded
    view = memoryview(data)
    digest, vendor, names, headers, typecode, starts_bytes, qualified, tags, overridden, derived = marshal.loads(
        view[at:at + head_size])
    starts = array(typecode)
    starts.frombytes(starts_bytes)
    names, headers = unpack_strings(names), unpack_strings(headers)
    if len(starts) != len(names) + len(headers) + 1 or starts[-1] != body_size:
        return None
    body = view[at + head_size:]
    ruleset = RuleSet(digest=digest, vendor_pattern=vendor)
    ruleset.names = LazyRules(names, range(len(names)), body, starts, Rule)
    ruleset.headers = LazyRules(headers, range(len(names), len(starts) - 1), body, starts, Rule)
    ruleset.qualified = {last: [(parts, Rule(*record)) for parts, record in entries]
                         for last, entries in qualified.items()}
    ruleset.by_hazard = {tag: frozenset(found) for tag, found in tags.items()}
    ruleset.overridden = {key: [Rule(*record) for record in replaced] for key, replaced in overridden}
    for attr, value in derived.items():
        setattr(ruleset, attr, unpack(value, names))
    return ruleset


# --- values, packed by shape -----------------------------------------------------------------

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
