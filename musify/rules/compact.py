"""The compiled rule database on disk: mapped, not read, and each record decoded when it is used.

Every run starts by loading the compiled rules. Pickled, the RuleSet took 0.08 s to load (35,000
`Rule` objects and the dicts around them) and the tables the passes derive from it another 0.04,
most of a one-file run's own cost, although such a run looks up a few dozen names. In this file
what a run needs at once is small, and the rest is read a name at a time:

  * the head (one marshal object): the digest, the vendor pattern, the qualified names, hazard tags
    and overridden records as they are (a few dozen records), the small derived tables (the
    scanner's prefixes, the shim names), and where each section of the body lies;
  * the body, 8-byte aligned sections: the records, each its own marshal string, with their
    offsets (a native `I` array); a hash index of the names and one of the headers
    (`musify.rules.packing`); the names and headers in record order, read when a table is needed
    whole; for each derived table kept partial (`musify/rules/derived.py`), its index and its
    whole, packed form.

A file is `MAGIC`, the lengths of the head and the body, the CRC-32 of the two, the head and the
body. One of another format, another byte order, or a length that does not add up reads as None:
the caller compiles the rules again. The file is mapped (`mmap`): a run touches the pages of the
names it asks for. Since a run reads only those pages, damage elsewhere (a flipped byte in a
record or an index) could not be seen as it loads, and a damaged record is a wrong rename, not
an error: `intact` checks the CRC over the whole file, which the loader does once per file (it
remembers a file found intact by its stat data, `musify.digests.checked`).
"""

from __future__ import annotations

import marshal
import struct
import sys
from array import array
from zlib import crc32

from musify.rules.lazy import LazyRules, PartialTable, Records
from musify.rules.model import Rule, RuleSet, rule_record
from musify.rules.packing import Buckets, pack, pack_strings, unpack, unpack_strings, write_buckets

MAGIC = b"musify-rules 3\n"
_LENGTHS = struct.Struct("<QQI")  # the head's length, the body's length, the CRC-32 of both
_ALIGN = 8


def dump(ruleset: RuleSet, derived: dict[str, object], partial: frozenset[str] = frozenset()) -> bytes:
    """The file's bytes for `ruleset` (plain dicts, as compiled) and its derived tables; those
    named in `partial` (a dict, or a tuple of dicts and sets, keyed by names) are indexed by name."""
    names, headers = list(ruleset.names), list(ruleset.headers)
    numbers = {name: i for i, name in enumerate(names)}
    body = _Body(len(MAGIC) + _LENGTHS.size)
    records = [marshal.dumps(rule_record(rule)) for rule in (*ruleset.names.values(), *ruleset.headers.values())]
    starts = array("I", [0])
    for data in records:
        starts.append(starts[-1] + len(data))
    body.add("records", b"".join(records))
    body.add("record starts", starts.tobytes())
    for key, table, first in (("names", names, 0), ("headers", headers, len(names))):
        body.add(key, marshal.dumps(pack_strings(table)))
        index, index_starts = write_buckets([(name, first + i) for i, name in enumerate(table)])  # record numbers
        body.add(key + " index", index)
        body.add(key + " index starts", index_starts)
    eager, kinds = {}, {}
    for attr, value in derived.items():
        if attr not in partial:
            eager[attr] = pack(value)  # small: its strings as they are (numbers would need the names read)
            continue
        parts = value if isinstance(value, tuple) else (value,)
        kinds[attr] = (isinstance(value, tuple), tuple(type(part).__name__ for part in parts))
        if not all(type(part) in (dict, set) for part in parts):
            raise TypeError(f"{attr}: a partial table is a dict, a set or a tuple of them")
        index, index_starts = write_buckets(_entries(parts))
        body.add(attr + " index", index)
        body.add(attr + " index starts", index_starts)
        body.add(attr + " whole", marshal.dumps(tuple(pack(part, numbers) for part in parts)))
    head = marshal.dumps({
        "byte order": sys.byteorder, "digest": ruleset.digest, "vendor": ruleset.vendor_pattern,
        "counts": (len(names), len(headers)),
        "qualified": {last: [(parts, rule_record(rule)) for parts, rule in entries]
                      for last, entries in ruleset.qualified.items()},
        "tags": {tag: tuple(sorted(found)) for tag, found in ruleset.by_hazard.items()},
        "overridden": [(key, [rule_record(rule) for rule in replaced]) for key, replaced in ruleset.overridden.items()],
        "eager": eager, "partial": kinds,
        "sections": body.where,
    })
    data = body.join(head)
    return MAGIC + _LENGTHS.pack(len(head), len(data) - len(head), crc32(data)) + data


class _Body:
    """Sections laid out after the head, each at a multiple of `_ALIGN` from the file's start
    (the head's length is only known at the end, so offsets are counted from the body's start)."""

    def __init__(self, prefix: int) -> None:
        self.prefix = prefix
        self.parts: list[bytes] = []
        self.size = 0
        self.where: dict[str, tuple[int, int]] = {}

    def add(self, name: str, data: bytes) -> None:
        self.where[name] = (self.size, len(data))
        self.parts.append(data)
        self.size += len(data)
        pad = -self.size % _ALIGN
        self.parts.append(b"\0" * pad)
        self.size += pad

    def join(self, head: bytes) -> bytes:
        """The head, padding to align the body, the body."""
        return head + b"\0" * (-(self.prefix + len(head)) % _ALIGN) + b"".join(self.parts)


def _entries(parts: tuple) -> list[tuple[str, tuple]]:
    """name -> (its value in each dict part or None, True or False for each set part); a set's
    names sorted, so that the file's bytes do not depend on the string hash seed."""
    names = dict.fromkeys(name for part in parts for name in (part if isinstance(part, dict) else sorted(part)))
    return [(name, tuple(part.get(name) if isinstance(part, dict) else name in part for part in parts))
            for name in names]


def intact(data) -> bool:
    """Whether `data` (the file's bytes, or its mapping) is a whole file of this format whose
    CRC-32 holds: every byte as written (a few milliseconds: the loader asks once per file)."""
    at = len(MAGIC) + _LENGTHS.size
    if len(data) < at or data[:len(MAGIC)] != MAGIC:
        return False
    head_size, body_size, crc = _LENGTHS.unpack_from(data, len(MAGIC))
    return len(data) == at + head_size + body_size and crc32(memoryview(data)[at:]) == crc


def load(data) -> RuleSet | None:
    """The RuleSet in `data` (a read-only mmap of the file, or its bytes), or None when `data` is
    not a whole file of this format for this machine. Its names and headers are `LazyRules`; its
    derived tables are set as the passes cache them, the partial ones with a `PartialTable` each
    in `RuleSet._partial`."""
    try:
        return _load(data)
    except (ValueError, EOFError, TypeError, KeyError, IndexError, AttributeError):  # a head marshal cannot read, or of another shape
        return None


def _load(data) -> RuleSet | None:
    at = len(MAGIC) + _LENGTHS.size
    if len(data) < at or data[:len(MAGIC)] != MAGIC:
        return None
    head_size, body_size, _crc = _LENGTHS.unpack_from(data, len(MAGIC))
    if len(data) != at + head_size + body_size:
        return None  # cut short (or grown)
    view = memoryview(data)
    head = marshal.loads(view[at:at + head_size])
    body_at = at + head_size + (-(at + head_size) % _ALIGN)
    if head["byte order"] != sys.byteorder or array("I").itemsize != 4:
        return None
    sections = {name: (body_at + start, length) for name, (start, length) in head["sections"].items()}
    if any(start + length > len(data) for start, length in sections.values()):
        return None

    def section(name: str) -> memoryview:
        start, length = sections[name]
        return view[start:start + length]

    def ints(name: str) -> memoryview:
        return section(name).cast("I")

    count, header_count = head["counts"]
    records = Records(section("records"), ints("record starts"), Rule)
    names = _once(lambda: unpack_strings(marshal.loads(section("names"))))
    ruleset = RuleSet(digest=head["digest"], vendor_pattern=head["vendor"])
    ruleset.names = LazyRules(Buckets(section("names index"), ints("names index starts")), names,
                              range(count), records)
    ruleset.headers = LazyRules(Buckets(section("headers index"), ints("headers index starts")),
                                lambda: unpack_strings(marshal.loads(section("headers"))),
                                range(count, count + header_count), records)
    ruleset.qualified = {last: [(parts, Rule(*record)) for parts, record in entries]
                         for last, entries in head["qualified"].items()}
    ruleset.by_hazard = {tag: frozenset(found) for tag, found in head["tags"].items()}
    ruleset.overridden = {key: [Rule(*record) for record in replaced] for key, replaced in head["overridden"]}
    for attr, value in head["eager"].items():
        setattr(ruleset, attr, unpack(value))
    partial = {}
    for attr, (is_tuple, kinds) in head["partial"].items():
        parts = tuple({"dict": dict, "set": set}[kind]() for kind in kinds)

        def whole(attr: str = attr) -> tuple:
            return tuple(unpack(part, names()) for part in marshal.loads(section(attr + " whole")))

        partial[attr] = PartialTable(parts, Buckets(section(attr + " index"), ints(attr + " index starts")), whole)
        setattr(ruleset, attr, parts if is_tuple else parts[0])
    if partial:
        ruleset._partial = partial  # type: ignore[attr-defined]
    return ruleset


def _once(read):
    """`read`, called at most once (the names list serves the names table and the derived ones)."""
    done: list = []

    def once():
        if not done:
            done.append(read())
        return done[0]

    return once
