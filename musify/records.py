"""The run record: what a migration did, as versioned JSON. Every report renders from it.

`FileResult` is per file; `RunRecord` holds them with totals. Both are plain dataclasses, picklable
for the process pool, and `to_json`/`from_json` round-trip, so `musify report run.json` can
re-render without re-migrating.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import field, fields
from itertools import chain
from json.encoder import c_make_encoder, encode_basestring_ascii
from operator import attrgetter, itemgetter
from typing import Any

from musify.classes import dataclass
from musify.diagnostics import Diagnostic
from musify.frontend import compiled
from musify.packed_edits import PackedEdits

# an entry, and the sums of the totals, in C (_crecord.c), or None: the Python here is the reference
_NATIVE = compiled.load("_crecord", "musify")

SCHEMA = "musify-run/2"
_FRESH: Any = object()  # a container argument not given: `FileResult` makes a new one
PIECE = 1 << 20  # bytes of the record yielded at once when it is written


@dataclass(init=False)  # __init__ below: the generated one is slow
class FileResult:
    """One file's entry of the run record (`to_json`), and what the run-level steps read of it."""

    path: str  # as the user gave it (input root joined with rel)
    output_path: str  # relative to the output tree, after renames
    kind: str  # cuda-source, cuda-header, cpp, musa, other
    status: str  # migrated | unchanged | skipped | failed | copied
    rel: str = ""  # relative to its input root, posix
    edit_count: int = 0
    # every edit: {start: [line, col], end: [line, col], old, new, rule, library, kind, category,
    # inferred}; None when the record was asked to be lite (--json-lite). The runner's results
    # keep them packed (musify/packed_edits.py); they read as the same sequence of dicts
    edits: list[dict] | PackedEdits | None = field(default_factory=list)
    references: dict[str, int] = field(default_factory=lambda: {"converted": 0, "unconverted": 0})
    include_rewrites: int = 0
    shim_includes: int = 0
    edits_by_library: dict[str, int] = field(default_factory=dict)
    edits_by_kind: dict[str, int] = field(default_factory=dict)
    renamed: dict[str, int] = field(default_factory=dict)  # CUDA name -> references rewritten
    unconverted: dict[str, int] = field(default_factory=dict)  # names reported, not rewritten
    inferred_edits: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)
    lines_total: int = 0
    lines_changed: int = 0
    bytes_total: int = 0
    bytes_changed: int = 0  # bytes of original text replaced
    facts: dict[str, int] = field(default_factory=dict)  # kernels, launches
    seconds: float = 0.0
    error: str | None = None
    # transient: not serialised
    declared: list[str] = field(default_factory=list, repr=False)
    pending_unknown: list[tuple[str, int, int]] = field(default_factory=list, repr=False)
    warp_aliases: list[str] = field(default_factory=list, repr=False)  # musify/passes/hazards/warp_macros.py
    pending_warp: list[tuple] = field(default_factory=list, repr=False)
    pasting: list[tuple[str, int]] = field(default_factory=list, repr=False)  # musify/passes/macro_pastes.py
    unknown_args: list[tuple] = field(default_factory=list, repr=False)

    def __init__(self, path: str, output_path: str, kind: str, status: str, rel: str = "", edit_count: int = 0,
                 edits: list[dict] | PackedEdits | None = _FRESH, references: dict[str, int] = _FRESH,
                 include_rewrites: int = 0, shim_includes: int = 0, edits_by_library: dict[str, int] = _FRESH,
                 edits_by_kind: dict[str, int] = _FRESH, renamed: dict[str, int] = _FRESH,
                 unconverted: dict[str, int] = _FRESH, inferred_edits: int = 0,
                 diagnostics: list[Diagnostic] = _FRESH, lines_total: int = 0, lines_changed: int = 0,
                 bytes_total: int = 0, bytes_changed: int = 0, facts: dict[str, int] = _FRESH,
                 seconds: float = 0.0, error: str | None = None, declared: list[str] = _FRESH,
                 pending_unknown: list[tuple[str, int, int]] = _FRESH, warp_aliases: list[str] = _FRESH,
                 pending_warp: list[tuple] = _FRESH, pasting: list[tuple[str, int]] = _FRESH,
                 unknown_args: list[tuple] = _FRESH) -> None:
        """What the dataclass would generate, each default container made by a literal (the
        generated one calls a factory per field: every file of a run makes one result, and this
        is about half its cost). `tests/test_run_glue.py` compares it with the fields' defaults."""
        self.path, self.output_path, self.kind, self.status = path, output_path, kind, status
        self.rel = rel
        self.edit_count = edit_count
        self.edits = [] if edits is _FRESH else edits
        self.references = {"converted": 0, "unconverted": 0} if references is _FRESH else references
        self.include_rewrites = include_rewrites
        self.shim_includes = shim_includes
        self.edits_by_library = {} if edits_by_library is _FRESH else edits_by_library
        self.edits_by_kind = {} if edits_by_kind is _FRESH else edits_by_kind
        self.renamed = {} if renamed is _FRESH else renamed
        self.unconverted = {} if unconverted is _FRESH else unconverted
        self.inferred_edits = inferred_edits
        self.diagnostics = [] if diagnostics is _FRESH else diagnostics
        self.lines_total = lines_total
        self.lines_changed = lines_changed
        self.bytes_total = bytes_total
        self.bytes_changed = bytes_changed
        self.facts = {} if facts is _FRESH else facts
        self.seconds = seconds
        self.error = error
        self.declared = [] if declared is _FRESH else declared
        self.pending_unknown = [] if pending_unknown is _FRESH else pending_unknown
        self.warp_aliases = [] if warp_aliases is _FRESH else warp_aliases
        self.pending_warp = [] if pending_warp is _FRESH else pending_warp
        self.pasting = [] if pasting is _FRESH else pasting
        self.unknown_args = [] if unknown_args is _FRESH else unknown_args

    def to_json(self, packed: bool = False) -> dict:
        """The file's record entry; `packed` leaves packed edits as they are (for the writer)."""
        # field by field rather than dataclasses.asdict, which deep-copies and is slow on big runs
        d = {name: getattr(self, name) for name in _SERIALISED}
        d["diagnostics"] = [x.to_json() for x in self.diagnostics]
        d["references"] = dict(self.references)
        d["seconds"] = round(self.seconds, 6)
        if isinstance(self.edits, PackedEdits) and not packed:
            d["edits"] = list(self.edits)
        return d

    def iter_json(self, deterministic: bool = False) -> Iterator[str]:
        """The entry as one line of compact JSON, in pieces: a file with a million edits is
        never one string (the pieces join to `json.dumps(entry, separators=(",", ":"))`)."""
        text = self.entry_json(deterministic)
        if text is not None:
            yield text
            return
        d = {name: getattr(self, name) for name in _SERIALISED}
        d["references"] = dict(self.references)
        d["seconds"] = 0.0 if deterministic else round(self.seconds, 6)
        d["diagnostics"] = [x.to_json() for x in self.diagnostics]
        edits = self.edits
        if not isinstance(edits, PackedEdits):
            yield _compact(d)
            return
        # one dump, cut where the edits go: the keys before them are fixed names and a JSON
        # string cannot hold an unescaped quote, so the first such text is the key
        d["edits"] = None
        whole = _compact(d)
        at = whole.index(_EDITS_KEY)
        yield whole[:at] + '"edits":'
        yield from edits.iter_json()
        yield whole[at + len(_EDITS_KEY):]

    def entry_json(self, deterministic: bool = False) -> str | None:
        """The entry as `iter_json` writes it, rendered in one C call; None where that is not
        how it is written (no C extension, a big file's edit arrays, a value of another type)."""
        if _NATIVE is None:
            return None
        edits, raw = self.edits, None
        if isinstance(edits, PackedEdits):
            raw = edits.text()  # the list's JSON as rendered (or read back from the spool)
            if raw is None:
                return None
        try:  # the fields as stored (every result holds them all), one look-up each in C
            values = list(_STORED(self.__dict__))
        except (KeyError, AttributeError):  # a subclass's own storage: read as attributes
            values = list(_VALUES(self))
        values[_SECONDS_AT] = 0.0 if deterministic else round(self.seconds, 6)
        return _NATIVE.entry(_KEYS, values, _EDITS_AT, raw, _DIAGNOSTIC)  # each Diagnostic read as it is

    @classmethod
    def from_json(cls, d: dict) -> FileResult:
        d = dict(d)
        d["diagnostics"] = [Diagnostic.from_json(x) for x in d.get("diagnostics", [])]
        return cls(**d)


_TRANSIENT = frozenset({"declared", "pending_unknown", "warp_aliases", "pending_warp", "pasting", "unknown_args"})
_SERIALISED = tuple(f.name for f in fields(FileResult) if f.name not in _TRANSIENT)  # in field order
# an entry rendered in one call (_crecord.c): its keys, and its values read in one call
_KEYS = tuple(f'"{name}":' for name in _SERIALISED)
_VALUES = attrgetter(*_SERIALISED)
_STORED = itemgetter(*_SERIALISED)  # the same values, of the instance dictionary: no attribute look-ups
_EDITS_AT, _SECONDS_AT = map(_SERIALISED.index, ("edits", "seconds"))
# a diagnostic's JSON as `Diagnostic.to_json` makes it, written by the C call straight from the
# object: key, attribute, and the attribute taken when the first is falsy (`end_line or line`)
_DIAGNOSTIC_FIELDS = (("id", "id", None), ("severity", "severity", None), ("path", "path", None),
                      ("line", "line", None), ("column", "column", None), ("end_line", "end_line", "line"),
                      ("end_column", "end_column", "column"), ("message", "message", None), ("name", "name", None),
                      ("args", "args", None), ("origin", "origin", None), ("sites", "sites", None),
                      ("verify", "verify", None))
_DIAGNOSTIC = (Diagnostic, *(tuple(column) for column in zip(*((f'"{k}":', a, b) for k, a, b in _DIAGNOSTIC_FIELDS))))
# what `_crecord.entries` reads of a run's results: entry_json's reading of each, for many at once
# (of exactly PackedEdits, `text()` is its `_json` slot, read without the call: test_crecord_equivalence)
_LAYOUT = (FileResult, PackedEdits, _SERIALISED, _KEYS, _EDITS_AT, _SECONDS_AT, _DIAGNOSTIC, round, "text", "_json")


def _compact(value) -> str:
    """`json.dumps(value, separators=(",", ":"))`, by one C encoder made once: `dumps` with
    arguments builds a `JSONEncoder` and its C encoder for every call, once per file of a run."""
    return "".join(_ENCODE(value, 0))


_ENCODE = (c_make_encoder or (lambda *_: None))(None, json.JSONEncoder().default, encode_basestring_ascii,
                                                None, ":", ",", False, False, True)
if _ENCODE is None:  # no C accelerator in this Python: the plain call
    _ENCODE = json.JSONEncoder(separators=(",", ":")).iterencode
_EDITS_KEY = '"edits":null'


@dataclass(init="fields")  # made once a run: no __init__ compiled at every start-up
class RunRecord:
    """The run record (`musify-run/2`): the run's settings, every file's entry, the totals."""

    tool_version: str
    command: str
    inputs: list[str]
    output: str  # the output directory, "in-place", "stdout" or "diff"
    options: dict
    ruleset: str  # digest of the rules used
    started: str = ""
    seconds: float = 0.0
    files: list[FileResult] = field(default_factory=list)
    exit_code: int = 0
    fail_on: str = "error"  # the lowest diagnostic severity that fails the run
    fail_on_change: bool = False  # `musify check`: a file that would change fails the run
    verify: dict | None = None  # the `musify verify` section (docs/verify.md)
    analysis: dict | None = None  # the `--analyze` section
    schema: str = SCHEMA

    @property
    def totals(self) -> dict:
        return compute_totals(self.files)

    def to_json(self, deterministic: bool = False, packed: bool = False) -> dict:
        """The record as JSON values; `packed` leaves each file's packed edits packed (a sequence
        that makes one file's dicts at a time: what the report renderers read)."""
        d = self._head(deterministic)
        d["files"] = [f.to_json(packed) for f in self.files]
        if deterministic:
            for f in d["files"]:
                f["seconds"] = 0.0
        return d

    def _head(self, deterministic: bool, totals: dict | None = None) -> dict:
        d = {
            "schema": self.schema,
            "tool_version": self.tool_version,
            "command": self.command,
            "inputs": self.inputs,
            "output": self.output,
            "options": self.options,
            "ruleset": self.ruleset,
            "started": "" if deterministic else self.started,
            "seconds": 0.0 if deterministic else round(self.seconds, 6),
            "exit_code": self.exit_code,
            "fail_on": self.fail_on,
            "fail_on_change": self.fail_on_change,
            "totals": self.totals if totals is None else totals,
            "verify": self.verify,
            "analysis": self.analysis,
        }
        if deterministic:
            d["options"] = {k: v for k, v in self.options.items() if k != "jobs"}
        return d

    def dumps(self, deterministic: bool = False) -> str:
        """One JSON document: the header and totals indented for reading, then one line per file
        (the C encoder, fast on runs of many thousands of files)."""
        return b"".join(self.iter_bytes(deterministic)).decode("utf-8")

    def iter_bytes(self, deterministic: bool = False, totals: dict | None = None) -> Iterator[bytes]:
        """`dumps` as UTF-8 in pieces, so a big run's record is written without ever being one
        string. `totals`: this record's totals when the caller already has them (`Report.totals`)."""
        head = json.dumps(self._head(deterministic, totals), indent=2)
        yield (head[:-2] + ',\n  "files": [\n').encode("utf-8")
        yield from iter_entries(self.files, deterministic)
        yield b"\n  ]\n}\n"

    @classmethod
    def from_json(cls, d: dict) -> RunRecord:
        if d.get("schema") != SCHEMA:
            hint = " (written by an older musify: run the migration again)" if d.get("schema") == "musify-run/1" else ""
            raise ValueError(f"not a musify run record (schema {d.get('schema')!r}, expected {SCHEMA!r}){hint}")
        files = [FileResult.from_json(f) for f in d["files"]]
        keys = ("tool_version", "command", "inputs", "output", "options", "ruleset", "started",
                "seconds", "exit_code", "fail_on", "fail_on_change", "verify", "analysis")
        return cls(files=files, **{k: d[k] for k in keys})


def iter_entries(files: list[FileResult], deterministic: bool = False) -> Iterator[bytes]:
    """The record's entries, each but the first after ",\\n    ", as UTF-8 in pieces of about
    PIECE bytes: rendered in C straight into the pieces (`_crecord.entries`: no call, string,
    join and encoding per file), each entry it leaves rendered in Python (`FileResult.iter_json`)."""
    i = 0
    native = _NATIVE is not None and type(files) is list
    parts: list[str] = []  # entries rendered in Python, gathered into pieces of about PIECE characters
    size = 0
    while i < len(files):
        if native:
            piece, after = _NATIVE.entries(files, i, PIECE, deterministic, _LAYOUT)
            if after > i:
                if parts:
                    yield "".join(parts).encode("utf-8")
                    parts, size = [], 0
                yield piece
                i = after
                continue
        parts.append(",\n    " if i else "    ")
        for part in files[i].iter_json(deterministic):
            if len(part) >= PIECE:  # a big entry (or part of one) as it is, not copied into a piece
                yield "".join(parts).encode("utf-8")
                yield part.encode("utf-8")
                parts, size = [], 0
                continue
            parts.append(part)
            size += len(part)
            if size >= PIECE:
                yield "".join(parts).encode("utf-8")
                parts, size = [], 0
        i += 1
    if parts:
        yield "".join(parts).encode("utf-8")


# the totals' sums: of an int attribute of each file, and of a dict of counts of each file
_INT_TOTALS = ("edit_count", "inferred_edits", "include_rewrites", "shim_includes", "lines_total",
               "lines_changed", "bytes_total", "bytes_changed")
_DICT_TOTALS = ("edits_by_library", "edits_by_kind", "renamed", "unconverted", "facts")


def compute_totals(files: list[FileResult]) -> dict:
    """The record's totals. The sums are gathered in one pass in C where it is built
    (`_crecord.sums`: a big run's results lie scattered in memory, and reading each file once
    rather than once per figure is most of the saving); `_sums_python` is the reference."""
    got = _NATIVE.sums(files, _INT_TOTALS, _DICT_TOTALS) if _NATIVE is not None and type(files) is list else None
    status, ints, dicts, converted, not_converted, severities, ids = got or _sums_python(files)
    sums = dict(zip(_INT_TOTALS, ints))
    by_lib, by_kind, renamed, unconverted, facts = dicts
    return {
        "files": len(files),
        "files_by_status": dict(sorted(status.items())),
        "edits": sums["edit_count"],
        "inferred_edits": sums["inferred_edits"],
        "edits_by_library": dict(sorted(by_lib.items())),
        "edits_by_kind": dict(sorted(by_kind.items())),
        "references_converted": converted,
        "references_unconverted": not_converted,
        "include_rewrites": sums["include_rewrites"],
        "shim_includes": sums["shim_includes"],
        "conversion_percent": round(100.0 * converted / (converted + not_converted), 2)
        if converted + not_converted else 100.0,
        "distinct_names_converted": len(renamed),
        "unconverted_names": dict(sorted(unconverted.items())),
        "lines_total": sums["lines_total"],
        "lines_changed": sums["lines_changed"],
        "bytes_total": sums["bytes_total"],
        "bytes_changed": sums["bytes_changed"],
        "diagnostics_by_severity": dict(sorted(severities.items())),
        "diagnostics_by_id": dict(sorted(ids.items())),
        "facts": dict(sorted(facts.items())),
    }


def _sums_python(files: list[FileResult]) -> tuple:
    """What `_crecord.sums` answers: (status counts, the `_INT_TOTALS` sums, the `_DICT_TOTALS`
    sums, references converted, references unconverted, severity counts, ID counts)."""
    status = Counter(map(_STATUS, files))
    dicts: list[dict[str, int]] = []
    for name in _DICT_TOTALS:
        dicts.append({})
        add_counts(dicts[-1], list(map(attrgetter(name), files)))
    diagnostics = list(chain.from_iterable(map(_DIAGNOSTICS, files)))
    references = list(map(_REFERENCES, files))
    return (status, [sum(map(attrgetter(name), files)) for name in _INT_TOTALS], dicts,
            sum(map(itemgetter("converted"), references)), sum(map(itemgetter("unconverted"), references)),
            Counter(map(_SEVERITY, diagnostics)), Counter(map(_ID, diagnostics)))


def add_counts(total: dict, counts: list[dict]) -> None:
    """Each dict of `counts` summed into `total`, key by key (in C when it is built)."""
    if _NATIVE is not None and type(counts) is list and _NATIVE.add_counts(total, counts):
        return
    for d in counts:  # plain loops: Counter.update checks each argument is a mapping, per file
        for k, v in d.items():
            total[k] = total.get(k, 0) + v


_STATUS, _DIAGNOSTICS, _REFERENCES = attrgetter("status"), attrgetter("diagnostics"), attrgetter("references")
_SEVERITY, _ID = attrgetter("severity"), attrgetter("id")
