"""SARIF 2.1.0 from a run record, for GitHub and GitLab code scanning.

One result per diagnostic, with the rule's metadata from the catalogue and its documentation page
(help text and URI), a physical location with the diagnostic's region, the other sites of a
grouped finding as related locations, and a fix wherever the record holds the edit that musify
made (or would make) at that place, so a reviewer sees the rename next to the finding.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from musify.diagnostics import CATALOGUE
from musify.report.view import as_dict, edit_list, effort_of, title_of

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "note": "note"}


def _uri(path: str) -> str:
    """A relative URI reference for a record path (percent-encoded, so any file name is safe)."""
    return quote(path.replace("\\", "/"), safe="/")


def _section(page: str, heading: str) -> str:
    m = re.search(rf"^## {heading}\s*\n(.*?)(?=^## |\Z)", page, re.DOTALL | re.MULTILINE)
    return " ".join(m.group(1).split()) if m else ""


def help_uri(diag_id: str) -> str:
    """Where the diagnostic's page is: the docs base in MUSIFY_DOCS_URL, else the installed page."""
    import os

    from musify.docs_paths import DOCS

    base = os.environ.get("MUSIFY_DOCS_URL")
    if base:
        return base.rstrip("/") + f"/diagnostics/{diag_id}.md"
    return (DOCS / "diagnostics" / f"{diag_id}.md").as_uri()


def _rule(diag_id: str) -> dict:
    from musify.docs_paths import diagnostic_page

    spec = CATALOGUE.get(diag_id)
    page = diagnostic_page(diag_id) or ""
    full = _section(page, "What") or (spec.template if spec else diag_id)
    why = _section(page, "Why")
    rule = {
        "id": diag_id,
        "name": "".join(w.capitalize() for w in re.split(r"[^A-Za-z0-9]+", title_of(diag_id)) if w) or diag_id,
        "shortDescription": {"text": title_of(diag_id)},
        "fullDescription": {"text": full + (f" {why}" if why else "")},
        "help": {"text": page or full, "markdown": page or full},
        "helpUri": help_uri(diag_id),
        "defaultConfiguration": {"level": LEVELS.get(spec.severity if spec else "warning", "warning")},
        "properties": {"effort": effort_of(diag_id), "tags": ["musa", "migration"]},
    }
    return rule


def _region(line: int, column: int, end_line: int, end_column: int, width: int = 0) -> dict:
    region = {"startLine": max(1, line), "startColumn": max(1, column)}
    if (end_line, end_column) > (line, column):
        region["endLine"], region["endColumn"] = end_line, end_column
    elif width:
        region["endLine"], region["endColumn"] = line, column + width
    return region


def _edit_at(edits: list[dict], line: int, column: int) -> dict | None:
    """The edit whose span holds (line, column): the change made where the diagnostic points."""
    for e in edits:
        start, end = tuple(e["start"]), tuple(e.get("end") or e["start"])
        if start <= (line, column) < max(end, (start[0], start[1] + 1)) and e.get("old") != e.get("new"):
            return e
    return None


def _fix(uri: str, edit: dict) -> dict:
    (l1, c1), (l2, c2) = edit["start"], edit.get("end") or edit["start"]
    return {
        "description": {"text": f"replace '{edit.get('old', '')}' with '{edit.get('new', '')}'"},
        "artifactChanges": [{
            "artifactLocation": {"uri": uri},
            "replacements": [{"deletedRegion": {"startLine": l1, "startColumn": c1, "endLine": l2, "endColumn": c2},
                              "insertedContent": {"text": edit.get("new", "")}}],
        }],
    }


def _result(diag: dict, rule_index: int, edits: list[dict]) -> dict:
    uri = _uri(diag["path"])
    region = _region(diag["line"], diag["column"], diag.get("end_line", 0), diag.get("end_column", 0),
                     len(diag.get("name") or ""))
    result: dict[str, Any] = {
        "ruleId": diag["id"],
        "ruleIndex": rule_index,
        "level": LEVELS.get(diag["severity"], "warning"),
        "message": {"text": diag["message"]},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}],
    }
    if diag.get("sites"):
        result["relatedLocations"] = [
            {"id": i + 1, "message": {"text": "another site of this finding"},
             "physicalLocation": {"artifactLocation": {"uri": uri}, "region": _region(ln, col, 0, 0)}}
            for i, (ln, col) in enumerate(diag["sites"])]
    edit = _edit_at(edits, diag["line"], diag["column"])
    if edit is not None:
        result["fixes"] = [_fix(uri, edit)]
    props = {k: v for k, v in (("origin", diag.get("origin")), ("verify", diag.get("verify")),
                               ("effort", effort_of(diag["id"]))) if v}
    if props:
        result["properties"] = props
    return result


def render_sarif(record: Any) -> str:
    """The run as one SARIF 2.1.0 log (a JSON document)."""
    d = as_dict(record)
    files = d.get("files", [])
    ids = sorted({x["id"] for f in files for x in f.get("diagnostics", [])})
    index = {diag_id: i for i, diag_id in enumerate(ids)}
    results = []
    for f in files:
        edits = edit_list(f)  # once per file: a packed list is unpacked for each call
        results.extend(_result(diag, index[diag["id"]], edits) for diag in f.get("diagnostics", []))
    failed = [f for f in files if f.get("status") == "failed"]
    run = {
        "tool": {"driver": {"name": "musify", "version": str(d.get("tool_version", "")),
                            "informationUri": help_uri("MU0001").rsplit("/diagnostics/", 1)[0] + "/",
                            "rules": [_rule(i) for i in ids]}},
        "invocations": [{
            "executionSuccessful": not failed,
            "commandLine": d.get("command", ""),
            "exitCode": int(d.get("exit_code", 0)),
            **({"startTimeUtc": d["started"]} if _is_utc(d.get("started", "")) else {}),
            "toolExecutionNotifications": [
                {"level": "error", "message": {"text": f"{f.get('path')}: {f.get('error') or 'failed'}"},
                 "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(f.get("path", ""))}}}]}
                for f in failed],
        }],
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {"schema": d.get("schema", ""), "ruleset": d.get("ruleset", "")},
    }
    text = json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=1)
    # <, > and & only occur inside JSON strings: as \u escapes the file stays valid and equal, and
    # a viewer that pastes text into a page without escaping it still gets no markup from us
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") + "\n"


def _is_utc(stamp: str) -> bool:
    return bool(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)", stamp or ""))
