"""Report formats. Each is a pure function of a run record (`RunRecord` or its JSON): reports
never rescan sources (the HTML diff may read an original back, and falls back when it cannot)."""

from __future__ import annotations

import json
from typing import Any

FORMATS = ("summary", "json", "csv", "stats-csv", "html", "sarif", "markdown")
_BY_SUFFIX = {".html": "html", ".htm": "html", ".sarif": "sarif", ".md": "markdown", ".csv": "csv"}


def format_for(out_file: str | None) -> str:
    """The format an output file name asks for (summary when there is no file or no known suffix)."""
    name = (out_file or "").lower()
    for suffix, fmt in _BY_SUFFIX.items():
        if name.endswith(suffix) or (suffix == ".sarif" and name.endswith(".sarif.json")):
            return fmt
    return "summary"


def render(record: Any, fmt: str) -> str:
    """The record in one of the file formats (every format but the console summary)."""
    if fmt == "json":
        from musify.report.view import as_dict

        return json.dumps(as_dict(record).get("totals") or {}, indent=2) + "\n"
    if fmt in ("csv", "stats-csv"):
        from musify.report.csv_report import render_csv, render_stats_csv

        return render_csv(record) if fmt == "csv" else render_stats_csv(record)
    if fmt == "sarif":
        from musify.report.sarif import render_sarif

        return render_sarif(record)
    if fmt == "markdown":
        from musify.report.markdown import render_markdown

        return render_markdown(record)
    if fmt == "html":
        from musify.report.html import render_html

        return render_html(record)
    raise ValueError(f"unknown report format {fmt!r}; known: {', '.join(FORMATS)}")


def write(record: Any, fmt: str, path: str) -> None:
    """Render and write atomically (a report is never left half written)."""
    from musify.file_tools import atomic_write

    atomic_write(path, render(record, fmt).encode("utf-8"), durable=False)
