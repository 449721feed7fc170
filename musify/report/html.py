"""The HTML migration report: one self-contained page rendered from a RunRecord.

It answers, in order, what a reviewer asks: how much was ported, what was left and why (grouped
by diagnostic, each linked to its documentation), which files changed, and the facts that frame
the port (kernels, launches, shims). Everything comes from the record's JSON, so
`musify report run.json -o report.html` re-renders any past run.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import jinja2

from musify.diagnostics import CATALOGUE
from musify.docs_paths import DOCS
from musify.records import RunRecord

_TEMPLATES = Path(__file__).parent / "templates"


def render_html(record: RunRecord, docs_base: str | None = None) -> str:
    """The report page; diagnostic links point into `docs_base` (default: this checkout's docs/)."""
    docs_base = docs_base or DOCS.as_uri()
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(_TEMPLATES)),
                             autoescape=jinja2.select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True)
    by_id: dict[str, list] = defaultdict(list)
    for f in record.files:
        for d in f.diagnostics:
            by_id[d.id].append(d)
    groups = []
    order = {"error": 0, "warning": 1, "note": 2}
    for diag_id, items in by_id.items():
        spec = CATALOGUE.get(diag_id)
        groups.append({
            "id": diag_id,
            "title": spec.title if spec else diag_id,
            "severity": items[0].severity,
            "effort": spec.effort if spec else "",
            "uses": sorted(items, key=lambda d: (d.path, d.line, d.column)),
        })
    groups.sort(key=lambda g: (order.get(g["severity"], 3), g["id"]))
    changed = [f for f in record.files if f.status in ("migrated", "failed", "skipped")]
    return env.get_template("report.html.j2").render(
        record=record, totals=record.totals, groups=groups, files=changed, docs_base=docs_base.rstrip("/"),
    )
