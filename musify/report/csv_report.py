"""CSV from a run record: a per-file table (`csv`) and HIPIFY-style statistics (`stats-csv`).

The statistics follow hipify-clang's --print-stats-csv: converted and unconverted references by
kind, by library and by name, then lines and bytes changed and the time taken, for the run and
for each file. Both tables are meant for spreadsheets, so every cell that a spreadsheet would take
for a formula (it starts with = + - @, a tab or a carriage return) is prefixed with a quote, as
OWASP advises against CSV injection: a file or identifier name can never run as a formula.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from typing import Any

from musify.report.view import as_dict, edit_count, edit_list, library_of

COLUMNS = ["path", "output_path", "status", "edits", "references_converted", "references_unconverted",
           "lines_total", "lines_changed", "bytes_total", "bytes_changed", "errors", "warnings", "notes",
           "kernels", "launches", "seconds"]
STATS_COLUMNS = ["scope", "measure", "kind", "library", "name", "value"]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def guard(cell: object) -> object:
    """A cell a spreadsheet shows as text: numbers pass, text that could start a formula is quoted."""
    if isinstance(cell, str) and cell.startswith(_FORMULA_START):
        return "'" + cell
    return cell


def _writer() -> tuple[io.StringIO, Any]:
    buf = io.StringIO()
    return buf, csv.writer(buf, lineterminator="\n")


def _row(w, cells: list) -> None:
    w.writerow([guard(c) for c in cells])


def render_csv(record: Any) -> str:
    """One row per file and a TOTAL row."""
    d = as_dict(record)
    buf, w = _writer()
    w.writerow(COLUMNS)
    for f in d.get("files", []):
        sev = Counter(x["severity"] for x in f.get("diagnostics", []))
        facts = f.get("facts") or {}
        _row(w, [f.get("path", ""), f.get("output_path", ""), f.get("status", ""), edit_count(f),
                 *_reference_counts(f),
                 f.get("lines_total", 0), f.get("lines_changed", 0), f.get("bytes_total", 0),
                 f.get("bytes_changed", 0), sev["error"], sev["warning"], sev["note"], facts.get("kernels", 0),
                 facts.get("launches", 0), round(f.get("seconds", 0.0), 6)])
    t = d.get("totals") or {}
    sev = t.get("diagnostics_by_severity", {})
    facts = t.get("facts", {})
    _row(w, ["TOTAL", "", "", t.get("edits", 0), t.get("references_converted", 0), t.get("references_unconverted", 0),
             t.get("lines_total", 0), t.get("lines_changed", 0), t.get("bytes_total", 0), t.get("bytes_changed", 0),
             sev.get("error", 0), sev.get("warning", 0), sev.get("note", 0), facts.get("kernels", 0),
             facts.get("launches", 0), round(d.get("seconds", 0.0), 6)])
    return buf.getvalue()


def _reference_counts(f: dict) -> tuple[int, int]:
    refs = f.get("references")
    if isinstance(refs, dict):
        return refs.get("converted", 0), refs.get("unconverted", 0)
    return sum((f.get("renamed") or {}).values()), sum((f.get("unconverted") or {}).values())


def _references(f: dict) -> tuple[Counter, Counter, Counter]:
    """(converted, unconverted) references keyed by (kind, library, name) for one file, and its
    other edits (include rewrites, shim includes, arch guards) by category: never references."""
    converted: Counter = Counter()
    other: Counter = Counter()
    edits = edit_list(f)
    if edits:
        for e in edits:
            if e.get("category", "reference") != "reference":
                other[e["category"]] += 1
                continue
            converted[(e.get("kind", ""), e.get("library", ""), e.get("old", ""))] += 1
    else:  # --json-lite or record v1: names only
        for name, n in (f.get("renamed") or {}).items():
            converted[("", "", name)] += n
    libs = {x.get("name"): (library_of(x), x["id"]) for x in f.get("diagnostics", []) if x.get("name")}
    unconverted: Counter = Counter()
    for name, n in (f.get("unconverted") or {}).items():
        lib, diag_id = libs.get(name, ("", ""))
        unconverted[(diag_id, lib, name)] += n
    return converted, unconverted, other


def _stats_rows(w, scope: str, converted: Counter, unconverted: Counter, other: Counter, measures: dict) -> None:
    for label, table in (("converted", converted), ("unconverted", unconverted)):
        _row(w, [scope, label, "", "", "", sum(table.values())])
        by_kind, by_lib = Counter(), Counter()
        for (kind, lib, _), n in table.items():
            by_kind[kind] += n
            by_lib[lib] += n
        for kind, n in sorted(by_kind.items()):
            _row(w, [scope, f"{label}_by_kind", kind, "", "", n])
        for lib, n in sorted(by_lib.items()):
            _row(w, [scope, f"{label}_by_library", "", lib, "", n])
        for (kind, lib, name), n in sorted(table.items()):
            _row(w, [scope, f"{label}_by_name", kind, lib, name, n])
    for category, n in sorted(other.items()):
        _row(w, [scope, "other_edits_by_category", category, "", "", n])
    for key, value in measures.items():
        _row(w, [scope, key, "", "", "", value])


def _measures(src: dict, seconds: float) -> dict:
    return {k: src.get(k, 0) for k in ("lines_total", "lines_changed", "bytes_total", "bytes_changed")} | {
        "seconds": round(seconds, 6)}


def render_stats_csv(record: Any) -> str:
    """HIPIFY-style statistics in long form: TOTAL first, then each file that had anything to port."""
    d = as_dict(record)
    buf, w = _writer()
    w.writerow(STATS_COLUMNS)
    total_c, total_u, total_o, per_file = Counter(), Counter(), Counter(), []
    for f in d.get("files", []):
        c, u, o = _references(f)
        total_c.update(c)
        total_u.update(u)
        total_o.update(o)
        if c or u or o:
            per_file.append((f, c, u, o))
    _stats_rows(w, "TOTAL", total_c, total_u, total_o, _measures(d.get("totals") or {}, d.get("seconds", 0.0)))
    for f, c, u, o in per_file:
        _stats_rows(w, f.get("path", ""), c, u, o, _measures(f, f.get("seconds", 0.0)))
    return buf.getvalue()
