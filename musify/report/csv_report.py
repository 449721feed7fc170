"""CSV statistics from a run record, one row per file (HIPIFY-style columns), plus a totals row."""

from __future__ import annotations

import csv
import io

from musify.records import RunRecord

COLUMNS = ["path", "output_path", "status", "edits", "references_unconverted", "lines_total",
           "lines_changed", "bytes_total", "bytes_changed", "errors", "warnings", "notes", "kernels", "launches"]


def render_csv(record: RunRecord) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for f in record.files:
        sev = {s: sum(1 for d in f.diagnostics if d.severity == s) for s in ("error", "warning", "note")}
        w.writerow([f.path, f.output_path, f.status, f.edit_count, sum(f.unconverted.values()), f.lines_total,
                    f.lines_changed, f.bytes_total, f.bytes_changed, sev["error"], sev["warning"], sev["note"],
                    f.facts.get("kernels", 0), f.facts.get("launches", 0)])
    t = record.totals
    sev = t["diagnostics_by_severity"]
    w.writerow(["TOTAL", "", "", t["edits"], t["references_unconverted"], t["lines_total"], t["lines_changed"],
                t["bytes_total"], t["bytes_changed"], sev.get("error", 0), sev.get("warning", 0),
                sev.get("note", 0), t["facts"].get("kernels", 0), t["facts"].get("launches", 0)])
    return buf.getvalue()
