"""The HTML migration report: one self-contained page rendered from a run record.

It answers, in order, what a reviewer asks: how much was ported and how much is left (summary and
charts), what needs attention (a searchable, filterable diagnostics table, each row linked to its
explanation embedded in the page), what changed in each file (highlighted diffs, collapsed and
kept as data and built only when opened, so a 2,000-file run loads and stays responsive), and
what `musify verify` found.

Safety by construction: jinja2 autoescapes every expression (`autoescape=True`, whatever the
template's name), the few HTML fragments built in Python escape their text themselves, the page
loads nothing from the network, and a Content-Security-Policy lets only the report's own script
(pinned by its hash) run, so a hostile file name or source line cannot become a live tag.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from musify.diagnostics import SEVERITIES
from musify.report import diffs
from musify.report.charts import bar_chart
from musify.report.vendored import copy_of, find_copies, split_effort
from musify.report.view import (
    EFFORTS,
    READINESS,
    all_diagnostics,
    as_dict,
    counts,
    display_path,
    edit_count,
    effort_of,
    library_of,
    readiness,
    title_of,
    verify_runs,
)

_TEMPLATES = Path(__file__).parent / "templates"
_TOTALS = {"files": 0, "files_by_status": {}, "lines_changed": 0, "lines_total": 0, "bytes_changed": 0,
           "bytes_total": 0, "conversion_percent": 100.0, "references_converted": 0, "references_unconverted": 0,
           "diagnostics_by_severity": {}, "edits_by_library": {}, "unconverted_names": {}, "facts": {}}


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(_TEMPLATES)), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True)


def _asset(name: str) -> str:
    return (_TEMPLATES / name).read_text(encoding="utf-8")


@cache
def explanation(diag_id: str) -> Markup:
    """The diagnostic's documentation page as HTML (raw HTML in the page is escaped, not kept)."""
    from markdown_it import MarkdownIt

    from musify.docs_paths import diagnostic_page

    page = diagnostic_page(diag_id)
    if page is None:
        return Markup("<p>No documentation page ships with this musify for {}.</p>").format(diag_id)
    html = MarkdownIt("commonmark", {"html": False}).render(page)
    # links between diagnostic pages point into this report; other pages of docs/ are not in it,
    # so their links become plain text rather than dead links
    html = _DIAG_LINK.sub(r'<a href="#doc-\1">', html)
    return Markup(_LOCAL_LINK.sub(r"\1", html))


_DIAG_LINK = re.compile(r'<a href="(?:\./)?(MU\d{4})\.md">')
_LOCAL_LINK = re.compile(r'<a href="(?!https?:|#|mailto:)[^"]*">(.*?)</a>', re.DOTALL)


def _explained(ids: set[str]) -> list[str]:
    """The IDs whose pages the report embeds: those raised, and those their pages link to."""
    todo, seen = sorted(ids), set(ids)
    while todo:
        for linked in re.findall(r'href="#doc-(MU\d{4})"', explanation(todo.pop())):
            if linked not in seen:
                seen.add(linked)
                todo.append(linked)
    return sorted(seen)


# Rows of the diagnostics table laid out at once; the rest wait behind "show more". A browser
# lays out every visible row, so 10,000 visible rows make loading and each filter take seconds.
ROWS_PER_PAGE = 1000


def _diag_rows(d: dict) -> list[dict]:
    rank = {s: i for i, s in enumerate(reversed(SEVERITIES))}
    rows = []
    for diag in all_diagnostics(d):
        rows.append({**diag, "library": library_of(diag), "effort": effort_of(diag["id"]),
                     "title": title_of(diag["id"]), "rank": rank.get(diag["severity"], 9)})
    rows.sort(key=lambda r: (r["rank"], r["path"], r["line"], r["column"], r["id"]))
    return rows


def _severity_by_effort(rows: list[dict]) -> list[dict]:
    table = []
    for sev in reversed(SEVERITIES):
        cells = {e: sum(1 for r in rows if r["severity"] == sev and r["effort"] == e) for e in EFFORTS}
        table.append({"severity": sev, "cells": cells, "total": sum(cells.values())})
    return table


def _files(d: dict, read_sources: bool) -> tuple[list[dict], dict[str, int]]:
    hl = diffs.Highlighter()
    out, modes = [], {"unified": 0, "edits": 0, "none": 0}
    for i, f in enumerate(d.get("files", [])):
        ready = readiness(f)
        if ready == "untouched" and not f.get("diagnostics"):
            continue
        mode, diff = diffs.file_diff(f, hl, read_sources)
        modes[mode] += 1
        out.append({"n": i, "path": display_path(f), "output_path": f.get("output_path", ""),
                    "status": f.get("status", ""), "error": f.get("error") or "", "readiness": ready,
                    "edits": edit_count(f), "lines_changed": f.get("lines_changed", 0),
                    "lines_total": f.get("lines_total", 0), "diagnostics": len(f.get("diagnostics", [])),
                    "diff_mode": mode, "diff": diff})
    return out, modes


def _verify(d: dict) -> dict | None:
    """The verify section (docs/verify.md: programs, each with its runs), as rows to show."""
    v = d.get("verify")
    if not v:
        return None
    rows = verify_runs(v)
    verdicts = counts(rows, lambda r: r["verdict"])
    extra = {k: val for k, val in v.items() if isinstance(val, (str, int, float))}
    return {"rows": rows, "verdicts": verdicts, "meta": extra}


def _analysis(section: dict | None) -> dict | None:
    """The analysis section with its tables ordered most work first."""
    if not section:
        return None

    def ordered(table: dict) -> dict:
        return dict(sorted(table.items(), key=lambda kv: (-kv[1]["effort_hours"], -kv[1]["manual"], kv[0])))

    return {**section, "directories": ordered(section["directories"]), "libraries": ordered(section["libraries"])}


def render_html(record: Any, read_sources: bool = True, rows_per_page: int = ROWS_PER_PAGE) -> str:
    """The report page. `read_sources`: build unified diffs from the original files when they are
    still readable and match the record (else the edits are listed as recorded). `rows_per_page`:
    diagnostics laid out before "show more"."""
    d = as_dict(record)
    totals = {**_TOTALS, **(d.get("totals") or {})}
    rows = _diag_rows(d)
    copies = find_copies(d.get("files", []))
    effort_total, vendored = split_effort(d.get("files", []), rows, copies)
    files, diff_modes = _files(d, read_sources)
    ready = {r: 0 for r in READINESS}
    manual_own = 0  # the files that need hand work outside the vendored copies (the effort card's)
    for f in d.get("files", []):
        state = readiness(f)
        ready[state] += 1
        manual_own += state == "manual" and (not copies or copy_of(f, copies) is None)
    by_cause = {f"{k} {title_of(k)}": v for k, v in counts(rows, lambda r: r["id"]).items()}
    charts = [
        bar_chart("Edits by library", totals.get("edits_by_library", {}), "bar"),
        bar_chart("Diagnostics by cause", by_cause, "bar warn"),
        bar_chart("Files by readiness", {k: v for k, v in ready.items() if k != "untouched"}, "bar ready"),
    ]
    script = _asset("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    ids = sorted({r["id"] for r in rows})
    explained = _explained(set(ids))
    return _env().get_template("report.html.j2").render(
        record=d, totals=totals, rows=rows, page=max(1, rows_per_page), files=files, diff_modes=diff_modes, charts=charts,
        readiness=ready, severity_by_effort=_severity_by_effort(rows), efforts=EFFORTS,
        effort_total=effort_total, vendored=vendored, manual_own=manual_own, verify=_verify(d),
        analysis=_analysis(d.get("analysis")),
        docs=[{"id": i, "title": title_of(i), "html": explanation(i)} for i in explained],
        filters={"id": ids, "severity": [s for s in reversed(SEVERITIES) if any(r["severity"] == s for r in rows)],
                 "library": sorted({r["library"] for r in rows}), "file": sorted({r["path"] for r in rows})},
        css=Markup(_asset("report.css") + "\n" + diffs.stylesheet()), script=Markup(script), script_hash=digest,
        diffs_json=_diffs_json(files),
    )


def _diffs_json(files: list[dict]) -> Markup:
    """Every file's diff HTML as one JSON data block, read only when a diff is opened: raw text
    costs the browser almost nothing to load, where 2,000 diffs as markup would be parsed up front.
    Without "</" and "<!" (written as JSON escapes) nothing can end the <script> element that
    holds it early; user text inside is already HTML-escaped, so this is markup musify wrote."""
    data = {str(f["n"]): str(f["diff"]) for f in files if f["diff_mode"] != "none"}
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return Markup(text.replace("</", "<\\/").replace("<!", "\\u003c!"))
