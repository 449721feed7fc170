"""The run record as the renderers read it: plain JSON values, plus the few derived facts that
several formats share (a file's readiness, a diagnostic's library, the effort estimate).

Every renderer takes the record (a `RunRecord` or its JSON dict) and goes through `as_dict`, so a
report is a pure function of the JSON that `--json` writes and `musify report run.json` reads back.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from musify.diagnostics import CATALOGUE, SEVERITY_RANK
from musify.packed_edits import PackedEdits

# Hours of hand work per diagnostic by the catalogue's effort class: a rough planning figure, not
# a promise (docs/report.md explains it). "none" is information only.
EFFORT_HOURS = {"none": 0.0, "low": 0.25, "medium": 1.0, "high": 4.0}
EFFORTS = ("none", "low", "medium", "high")
READINESS = ("automatic", "shims", "manual", "failed", "untouched")
SHIM_DIAGNOSTICS = frozenset({"MU2060"})  # a call rewritten to a compatibility shim


def as_dict(record: Any) -> dict:
    """The record's JSON form (a dict passes through unchanged)."""
    if isinstance(record, dict):
        return record
    d = record.to_json(packed=True)  # edits stay packed; `edit_list` unpacks one file's at a time
    for section in ("verify", "analysis"):  # sections others add as plain attributes
        if d.get(section) is None and getattr(record, section, None) is not None:
            d[section] = getattr(record, section)
    return d


def edit_count(f: dict) -> int:
    """Edits in a file: `edit_count` in record v2, where `edits` became the list of edits."""
    if "edit_count" in f:
        return int(f["edit_count"] or 0)
    edits = f.get("edits")
    return len(edits) if isinstance(edits, list) else int(edits or 0)


def edit_list(f: dict) -> list[dict]:
    """The file's edits (record v2, not --json-lite), each {start, end, old, new, rule, library, kind}."""
    edits = f.get("edits")
    if isinstance(edits, PackedEdits):
        return list(edits)
    return edits if isinstance(edits, list) else []


def effort_of(diag_id: str) -> str:
    spec = CATALOGUE.get(diag_id)
    return spec.effort if spec else "medium"


def title_of(diag_id: str) -> str:
    spec = CATALOGUE.get(diag_id)
    return spec.title if spec else diag_id


_FAMILIES = {"MU0": "input", "MU1": "names", "MU2": "hazard", "MU3": "precise", "MU4": "exclusions",
             "MU5": "verify", "MU6": "build"}


def library_of(diag: dict) -> str:
    """The library a diagnostic is about: its `library` argument, else the family of its ID."""
    lib = (diag.get("args") or {}).get("library")
    if lib:
        return str(lib)
    return _FAMILIES.get(diag.get("id", "")[:3], "other")


def needs_hand_work(diag: dict) -> bool:
    """A warning or an error is a place someone must look at; a note is information."""
    return SEVERITY_RANK.get(diag.get("severity", "note"), 0) >= SEVERITY_RANK["warning"]


def uses_shim(f: dict) -> bool:
    return bool(f.get("shim_includes")) or any(d.get("id") in SHIM_DIAGNOSTICS for d in f.get("diagnostics", []))


def readiness(f: dict) -> str:
    """How a file ports: automatic (renames only), through shims, with manual work, or failed;
    untouched when it holds nothing to port."""
    if f.get("status") == "failed" or f.get("error"):
        return "failed"
    diags = f.get("diagnostics", [])
    if any(needs_hand_work(d) for d in diags) or sum((f.get("unconverted") or {}).values()):
        return "manual"
    if uses_shim(f):
        return "shims"
    if edit_count(f) or f.get("status") == "migrated":
        return "automatic"
    return "untouched"


def effort_hours(diags: list[dict]) -> float:
    return round(sum(EFFORT_HOURS.get(effort_of(d.get("id", "")), 1.0) for d in diags), 2)


def all_diagnostics(d: dict) -> list[dict]:
    """Every diagnostic of the run, each with its file's path, in file then position order."""
    return [diag for f in d.get("files", []) for diag in f.get("diagnostics", [])]


def counts(items, key) -> dict[str, int]:
    """Counts by `key(item)`, largest first (ties by name), as a plain dict for templates."""
    c = Counter(key(i) for i in items)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def verify_runs(section: dict) -> list[dict]:
    """One row per (program, arch) of a verify section (docs/verify.md: each program's `archs`
    maps an arch to its run): name, arch, backend, verdict, reason, first difference."""
    rows = []
    for p in section.get("programs") or []:
        if not isinstance(p, dict):
            continue
        name = str(p.get("name") or p.get("program") or p.get("path") or "?")
        runs = [{"arch": arch, **run} for arch, run in (p.get("archs") or {}).items() if isinstance(run, dict)]
        for run in runs + [r for r in p.get("runs") or [] if isinstance(r, dict)]:
            rows.append({"name": name, "arch": str(run.get("arch") or ""),
                         "backend": str(run.get("backend") or section.get("backend") or ""),
                         "verdict": str(run.get("verdict") or "?"), "reason": str(run.get("reason") or ""),
                         "first_difference": _first_difference(run.get("first_difference"))})
    return rows


def _first_difference(fd: object) -> str:
    """The first difference as text: where, then the diff (or original against port)."""
    if not fd:
        return ""
    if not isinstance(fd, dict):
        return str(fd)
    shown = fd.get("diff") or f"original: {fd.get('original', '')}\nport: {fd.get('port', '')}"
    return f"{fd.get('where', '')}\n{shown}".strip()


def display_path(f: dict) -> str:
    return f.get("path") or f.get("rel") or f.get("output_path") or "?"
