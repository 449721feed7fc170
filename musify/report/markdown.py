"""Markdown for a pull-request comment: the totals, what needs attention by cause, and the first
places to look, short enough to read in a review and safe to paste anywhere.

GitHub and GitLab render some HTML inside Markdown (an `<img>` tag works), so every value from the
user's files goes through `md_escape`: `&`, `<` and `>` become entities (and `@`, `#`,
so no one is mentioned and no issue linked) and the punctuation that Markdown acts on inside a
line is backslash-escaped, so a file name is shown, never interpreted.
"""

from __future__ import annotations

import re
from typing import Any

from musify.report.vendored import split_effort
from musify.report.view import (
    READINESS,
    all_diagnostics,
    as_dict,
    counts,
    effort_of,
    readiness,
    title_of,
    verify_runs,
)

MAX_PLACES = 25
_ENTITIES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "&#64;", "#": "&#35;"})  # no @mention
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def md_escape(text: object) -> str:
    """Text shown literally in GitHub/GitLab Markdown, table cells included."""
    s = _MD_SPECIAL.sub(r"\\\1", str(text)).translate(_ENTITIES)
    return " ".join(s.split())  # a newline would end a table row


def render_markdown(record: Any, max_places: int = MAX_PLACES) -> str:
    d = as_dict(record)
    t = d.get("totals") or {}
    sev = t.get("diagnostics_by_severity", {})
    diags = all_diagnostics(d)
    effort, vendored = split_effort(d.get("files", []), diags)
    ready = counts(d.get("files", []), readiness)
    out = [
        "## musify migration report",
        "",
        f"musify {md_escape(d.get('tool_version', ''))}, exit code {d.get('exit_code', 0)}",
        "",
        "| files | lines changed | references converted | errors | warnings | notes | effort |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        (f"| {t.get('files', 0)} | {t.get('lines_changed', 0)} of {t.get('lines_total', 0)} | "
         f"{t.get('references_converted', 0)} of {t.get('references_converted', 0) + t.get('references_unconverted', 0)}"
         f" ({t.get('conversion_percent', 100.0)}%) | {sev.get('error', 0)} | {sev.get('warning', 0)} | "
         f"{sev.get('note', 0)} | {effort:g} h |"),
        "",
        "Files: " + ", ".join(f"{ready[r]} {r}" for r in READINESS if ready.get(r)),
    ]
    out += [f"Not counted in the effort: vendored {c.library} in {md_escape(c.root)}, {n} findings ({hours:g} h "
            f"line by line): replace it with MUSA's {c.counterpart}." for c, hours, n in vendored]
    verify = d.get("verify")
    if isinstance(verify, dict):
        verdicts = counts(verify_runs(verify), lambda r: r["verdict"])
        if verdicts:
            out += ["", "Verify: " + ", ".join(f"{n} {md_escape(v)}" for v, n in verdicts.items())]
    if diags:
        out += ["", "### What needs attention", "", "| ID | cause | severity | effort | count |", "|---|---|---|---|---:|"]
        by_id = counts(diags, lambda x: x["id"])
        severity = {x["id"]: x["severity"] for x in diags}
        for diag_id, n in by_id.items():
            out.append(f"| {diag_id} | {md_escape(title_of(diag_id))} | {severity[diag_id]} | "
                       f"{effort_of(diag_id)} | {n} |")
        order = {"error": 0, "warning": 1, "note": 2}
        first = sorted(diags, key=lambda x: (order.get(x["severity"], 3), x["path"], x["line"], x["column"]))
        out += ["", "<details><summary>First places to look</summary>", "",
                "| where | ID | message |", "|---|---|---|"]
        for x in first[:max_places]:
            out.append(f"| {md_escape(x['path'])}:{x['line']}:{x['column']} | {x['id']} | {md_escape(x['message'])} |")
        if len(first) > max_places:
            out.append(f"| … | | {len(first) - max_places} more in the full report |")
        out += ["", "</details>"]
    else:
        out += ["", "Nothing needs attention: every CUDA reference was ported and no hazard was found."]
    return "\n".join(out) + "\n"
