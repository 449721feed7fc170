"""CSV (per file and HIPIFY-style statistics) and the Markdown pull-request comment."""

from __future__ import annotations

import csv
import io

from conftest import HOSTILE_TAGS

from musify.report.csv_report import guard, render_csv, render_stats_csv
from musify.report.markdown import md_escape, render_markdown


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_cells_that_would_be_formulas_are_quoted():
    for bad in ("=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"):
        assert guard(bad) == "'" + bad
    assert guard("src/a.cu") == "src/a.cu" and guard(-3) == -3 and guard(0.5) == 0.5
    record = {"files": [{"path": "=cmd|' /C calc'!A0.cu", "output_path": "@x.mu", "status": "migrated",
                         "edits": [{"start": [1, 1], "end": [1, 9], "old": "-cudaX", "new": "+musaX",
                                    "kind": "function", "library": "=lib"}],
                         "unconverted": {"@cudaY": 2}, "diagnostics": [], "renamed": {"-cudaX": 1}}],
              "totals": {"edits": 1}}
    for text in (render_csv(record), render_stats_csv(record)):
        for row in csv.reader(io.StringIO(text)):
            assert not any(cell.startswith(("=", "+", "-", "@")) for cell in row), row
    stats = _rows(render_stats_csv(record))
    assert {"scope": "'=cmd|' /C calc'!A0.cu", "measure": "converted_by_name", "kind": "function",
            "library": "'=lib", "name": "'-cudaX", "value": "1"} in stats


def test_stats_csv_counts_match_the_totals(corpora_record):
    totals = corpora_record.totals
    rows = _rows(render_stats_csv(corpora_record))
    total = {(r["measure"]): int(float(r["value"])) for r in rows if r["scope"] == "TOTAL" and not r["name"]
             and not r["kind"] and not r["library"]}
    assert total["converted"] == totals["references_converted"]
    assert total["unconverted"] == totals["references_unconverted"]
    assert total["lines_changed"] == totals["lines_changed"] and total["bytes_changed"] == totals["bytes_changed"]
    by_name = sum(int(r["value"]) for r in rows if r["scope"] == "TOTAL" and r["measure"] == "converted_by_name")
    assert by_name == totals["references_converted"]
    unconverted = {r["name"]: int(r["value"]) for r in rows if r["scope"] == "TOTAL"
                   and r["measure"] == "unconverted_by_name"}
    assert unconverted == totals["unconverted_names"]
    per_file = _rows(render_csv(corpora_record))
    assert per_file[-1]["path"] == "TOTAL" and int(per_file[-1]["lines_changed"]) == totals["lines_changed"]


def test_markdown_comment_summarises_and_escapes(corpora_record, hostile):
    md = render_markdown(corpora_record)
    totals = corpora_record.totals
    assert md.startswith("## musify migration report\n")
    assert f"| {totals['files']} | {totals['lines_changed']} of {totals['lines_total']} |" in md
    for diag_id, n in totals["diagnostics_by_id"].items():
        assert f"| {diag_id} |" in md and f"| {n} |" in md
    assert md_escape("a|b <img> @here #1 __x__") == r"a\|b &lt;img&gt; &#64;here &#35;1 \_\_x\_\_"
    for tag in HOSTILE_TAGS:
        assert tag not in hostile["markdown"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in hostile["markdown"]
