"""The run record: what a migration did, as versioned JSON. Every report renders from it.

`FileResult` is per file; `RunRecord` holds them with totals. Both are plain dataclasses, picklable
for the process pool, and `to_json`/`from_json` round-trip, so `musify report run.json` can
re-render without re-migrating.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from json.encoder import c_make_encoder, encode_basestring_ascii
from typing import TYPE_CHECKING

from musify.diagnostics import Diagnostic
from musify.packed_edits import PackedEdits

if TYPE_CHECKING:
    from musify.spool import Rendered

SCHEMA = "musify-run/2"


@dataclass
class FileResult:
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
    # the diagnostics as rendered where the file was migrated or as spooled (musify/spool.py)
    rendered: Rendered | None = field(default=None, repr=False, compare=False)

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
        seconds = 0.0 if deterministic else round(self.seconds, 6)
        edits = self.edits
        packed = isinstance(edits, PackedEdits)
        rendered = self.rendered
        if rendered is not None:  # rendered when the result arrived (musify/spool.py)
            whole = rendered.read()
            diags = rendered.json_for(self.diagnostics, diagnostic_json, whole)
            if rendered.template_for(self):
                # as in the dump below, the first '"NAME":null' of each hole is its key
                values = (_compact(self.references), _compact(self.unconverted), diags, _compact(seconds),
                          _compact(self.error))
                at = whole.index('"edits":null') + 8
                yield whole[:at]
                yield from edits.iter_json() if packed else (_compact(edits),)
                for name, value in zip(HOLES[1:], values):
                    cut = whole.index(f'"{name}":null', at + 4) + len(name) + 3
                    yield whole[at + 4:cut]
                    yield value
                    at = cut
                yield whole[at + 4:rendered.tsize]
                return
        else:
            diags = None
        d = {name: getattr(self, name) for name in _SERIALISED}
        d["references"] = dict(self.references)
        d["seconds"] = seconds
        if diags is None:
            d["diagnostics"] = [x.to_json() for x in self.diagnostics]
            if not packed:
                yield _compact(d)
                return
        else:
            d["diagnostics"] = None
        if packed:
            d["edits"] = None
        # one dump, cut where the edits and the diagnostics go: the keys before them are fixed
        # names and a JSON string cannot hold an unescaped quote, so the first such text is the key
        whole = _compact(d)
        at = 0
        if packed:
            at = whole.index(_EDITS_KEY)
            yield whole[:at] + '"edits":'
            yield from edits.iter_json()
            at += len(_EDITS_KEY)
        if diags is not None:
            cut = whole.index(_DIAGNOSTICS_KEY, at)
            yield whole[at:cut] + '"diagnostics":'
            yield diags
            at = cut + len(_DIAGNOSTICS_KEY)
        yield whole[at:]

    @classmethod
    def from_json(cls, d: dict) -> FileResult:
        d = dict(d)
        d["diagnostics"] = [Diagnostic.from_json(x) for x in d.get("diagnostics", [])]
        return cls(**d)


_TRANSIENT = frozenset({"declared", "pending_unknown", "rendered"})
_SERIALISED = tuple(f.name for f in fields(FileResult) if f.name not in _TRANSIENT)  # in field order
# the fields of an entry that may change after the file was migrated (the run-level finalisers,
# the clock), in field order: an entry rendered early leaves holes for them (`entry_template`)
HOLES = ("edits", "references", "unconverted", "diagnostics", "seconds", "error")
# the others, compared when the entry is written with what it was rendered from: numbers and
# strings by value and type (a pickle keeps no number's identity), dicts by identity
FIXED_OBJECTS = ("edits_by_library", "edits_by_kind", "renamed", "facts")
FIXED_VALUES = tuple(name for name in _SERIALISED if name not in HOLES and name not in FIXED_OBJECTS)
FIXED = FIXED_VALUES + FIXED_OBJECTS


def entry_template(result: FileResult) -> str:
    """`result`'s entry as the record writes it, but with null in the `HOLES`."""
    d = {name: getattr(result, name) for name in _SERIALISED}
    for name in HOLES:
        d[name] = None
    return _compact(d)


def _compact(value) -> str:
    """`json.dumps(value, separators=(",", ":"))`, by one C encoder made once: `dumps` with
    arguments builds a `JSONEncoder` and its C encoder for every call, once per file of a run."""
    return "".join(_ENCODE(value, 0))


_ENCODE = (c_make_encoder or (lambda *_: None))(None, json.JSONEncoder().default, encode_basestring_ascii,
                                                None, ":", ",", False, False, True)
if _ENCODE is None:  # no C accelerator in this Python: the plain call
    _ENCODE = json.JSONEncoder(separators=(",", ":")).iterencode
_EDITS_KEY = '"edits":null'
_DIAGNOSTICS_KEY = '"diagnostics":null'


def diagnostic_json(d: Diagnostic) -> str:
    """One diagnostic as the record writes it (compact JSON)."""
    return _compact(d.to_json())


@dataclass
class RunRecord:
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

    def _head(self, deterministic: bool) -> dict:
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
            "totals": self.totals,
            "verify": self.verify,
            "analysis": self.analysis,
        }
        if deterministic:
            d["options"] = {k: v for k, v in self.options.items() if k != "jobs"}
        return d

    def dumps(self, deterministic: bool = False) -> str:
        """One JSON document: the header and totals indented for reading, then one line per file
        (the C encoder, fast on runs of many thousands of files)."""
        return "".join(self.iter_json(deterministic))

    def iter_json(self, deterministic: bool = False) -> Iterator[str]:
        """`dumps` in pieces, so a big run's record is written without ever being one string."""
        head = json.dumps(self._head(deterministic), indent=2)
        yield head[:-2] + ',\n  "files": [\n'
        for i, f in enumerate(self.files):
            yield ",\n    " if i else "    "
            yield from f.iter_json(deterministic)
        yield "\n  ]\n}\n"

    @classmethod
    def from_json(cls, d: dict) -> RunRecord:
        if d.get("schema") != SCHEMA:
            hint = " (written by an older musify: run the migration again)" if d.get("schema") == "musify-run/1" else ""
            raise ValueError(f"not a musify run record (schema {d.get('schema')!r}, expected {SCHEMA!r}){hint}")
        files = [FileResult.from_json(f) for f in d["files"]]
        keys = ("tool_version", "command", "inputs", "output", "options", "ruleset", "started",
                "seconds", "exit_code", "fail_on", "fail_on_change", "verify", "analysis")
        return cls(files=files, **{k: d[k] for k in keys})


def compute_totals(files: list[FileResult]) -> dict:
    status = Counter(f.status for f in files)
    by_lib: dict[str, int] = {}
    by_kind: dict[str, int] = {}
    renamed: dict[str, int] = {}
    unconverted: dict[str, int] = {}
    facts: dict[str, int] = {}
    severities: Counter = Counter()
    ids: Counter = Counter()
    for f in files:  # plain loops: Counter.update checks each argument is a mapping, per file
        for total, counts in ((by_lib, f.edits_by_library), (by_kind, f.edits_by_kind),
                              (renamed, f.renamed), (unconverted, f.unconverted), (facts, f.facts)):
            for k, v in counts.items():
                total[k] = total.get(k, 0) + v
        if f.diagnostics:
            severities.update(d.severity for d in f.diagnostics)
            ids.update(d.id for d in f.diagnostics)
    converted = sum(f.references["converted"] for f in files)
    not_converted = sum(f.references["unconverted"] for f in files)
    return {
        "files": len(files),
        "files_by_status": dict(sorted(status.items())),
        "edits": sum(f.edit_count for f in files),
        "inferred_edits": sum(f.inferred_edits for f in files),
        "edits_by_library": dict(sorted(by_lib.items())),
        "edits_by_kind": dict(sorted(by_kind.items())),
        "references_converted": converted,
        "references_unconverted": not_converted,
        "include_rewrites": sum(f.include_rewrites for f in files),
        "shim_includes": sum(f.shim_includes for f in files),
        "conversion_percent": round(100.0 * converted / (converted + not_converted), 2)
        if converted + not_converted else 100.0,
        "distinct_names_converted": len(renamed),
        "unconverted_names": dict(sorted(unconverted.items())),
        "lines_total": sum(f.lines_total for f in files),
        "lines_changed": sum(f.lines_changed for f in files),
        "bytes_total": sum(f.bytes_total for f in files),
        "bytes_changed": sum(f.bytes_changed for f in files),
        "diagnostics_by_severity": dict(sorted(severities.items())),
        "diagnostics_by_id": dict(sorted(ids.items())),
        "facts": dict(sorted(facts.items())),
    }
