"""The HTML report: escaped by construction, self-contained, every diagnostic explained in the page,
diffs built from the record's edits."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re

from click.testing import CliRunner
from conftest import HOSTILE_NAME, HOSTILE_TAGS
from hypothesis import given, settings
from hypothesis import strategies as st

from musify.cli import main
from musify.report import format_for
from musify.report.diffs import table_html
from musify.report.html import _env, render_html


def test_autoescape_is_on_whatever_the_template_is_called():
    assert _env().autoescape is True
    assert "&lt;b&gt;" in _env().from_string("{{ x }}").render(x="<b>")


def test_hostile_file_name_and_source_stay_text_in_every_format(hostile):
    html, sarif, md = hostile["html"], hostile["sarif"], hostile["markdown"]
    for text in (html, sarif, md):
        for tag in HOSTILE_TAGS:
            assert tag not in text
    # the name is there, escaped, so the reader still sees which file it is
    assert 'x&#34;&gt;&lt;img src=x onerror=alert(1)&gt;.cu' in html
    assert "x&#34;&gt;&lt;img src=x onerror=alert(1)&gt;.cu" in md or "x\"&gt;&lt;img" in md
    # one script only, ours (and the diffs as a JSON data block), and the page's policy lets
    # nothing else run
    assert html.count("<script") == 2 and html.count('<script type="application/json" id="diffs">') == 1
    script = re.search(r"<script>(.*?)</script>", html, re.DOTALL).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in html
    # nothing is loaded from anywhere: no external script, style, image, frame or font
    loads = r"""(src|srcset|data)\s*=\s*["']?\s*(https?:|//)|<link|@import|url\("""
    assert not re.search(loads, html, re.IGNORECASE)
    # the SARIF is the same data, valid JSON, the path percent-encoded in its URIs
    log = json.loads(sarif)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris and all(not set(u) & set('<>"') for u in uris)
    messages = [r["message"]["text"] for r in log["runs"][0]["results"]]
    assert any("<img src=x onerror=alert(3)" in m for m in messages)  # kept as text, escaped on the wire


def test_every_diagnostic_links_to_its_explanation_in_the_page(corpora_record, corpora_html):
    html = corpora_html
    ids = {d.id for f in corpora_record.files for d in f.diagnostics}
    assert ids
    for diag_id in ids:
        assert f'href="#doc-{diag_id}"' in html
        block = html.split(f'id="doc-{diag_id}"', 1)[1].split("</details>", 1)[0]
        assert "<h2>How to fix</h2>" in block  # the docs page rendered, not linked to a checkout
    assert 'href="file:' not in html and not re.search(r'href="[^"]*MU\d{4}\.md"', html)
    for linked in set(re.findall(r'href="#doc-(MU\d{4})"', html)):  # links between pages stay inside
        assert f'id="doc-{linked}"' in html
    rows = html.count("<tr data-id=")
    assert rows == sum(len(f.diagnostics) for f in corpora_record.files)


def test_summary_has_charts_and_totals(corpora_record, corpora_html):
    html = corpora_html
    totals = corpora_record.totals
    assert html.count('<svg class="chart"') == 3
    for title in ("Edits by library", "Diagnostics by cause", "Files by readiness"):
        assert f'aria-label="{title}"' in html
    assert f"<b>{totals['lines_changed']}</b>lines changed" in html
    lib, n = max(totals["edits_by_library"].items(), key=lambda kv: kv[1])
    assert f"<tr><td>{lib}</td><td class=\"n\">{n}</td></tr>" in html


def _v2_file(path: str) -> dict:
    return {"path": path, "output_path": "a.mu", "kind": "cuda-source", "status": "migrated", "rel": "a.cu",
            "edit_count": 2, "edits": [
                {"start": [2, 3], "end": [2, 13], "old": "cudaMalloc", "new": "musaMalloc", "rule": "cudaMalloc",
                 "library": "cudart", "kind": "function", "inferred": False},
                {"start": [3, 3], "end": [3, 11], "old": "cudaFree", "new": "musaFree", "rule": "cudaFree",
                 "library": "cudart", "kind": "function", "inferred": False}],
            "diagnostics": [], "renamed": {"cudaMalloc": 1, "cudaFree": 1}, "unconverted": {},
            "edits_by_library": {"cudart": 2}, "lines_total": 4, "lines_changed": 2}


def _v2_record(files: list[dict]) -> dict:
    return {"schema": "musify-run/2", "tool_version": "t", "command": "c", "ruleset": "r", "exit_code": 0,
            "totals": {"files": len(files), "files_by_status": {"migrated": len(files)}, "lines_changed": 2,
                       "lines_total": 4, "bytes_changed": 0, "bytes_total": 0, "conversion_percent": 100.0,
                       "references_converted": 2, "references_unconverted": 0, "diagnostics_by_severity": {},
                       "edits_by_library": {"cudart": 2}, "facts": {}, "unconverted_names": {}},
            "files": files}


def _diffs(html: str) -> dict[str, str]:
    block = html.split('<script type="application/json" id="diffs">', 1)[1].split("</script>", 1)[0]
    assert "</" not in block and "<!" not in block
    return json.loads(block)


def test_diff_is_rebuilt_from_the_edits_against_the_original(tmp_path):
    src = tmp_path / "a.cu"
    src.write_text("int main() {\n  cudaMalloc(&p, 4);\n  cudaFree(p); // </script>\n}\n")
    html = render_html(_v2_record([_v2_file(str(src))]))
    assert 'data-diff="0"' in html.split('id="file-0"', 1)[1].split("</details>", 1)[0]
    compact = _diffs(html)["0"]
    assert compact.startswith("@1,1\n") and "<tr" not in compact  # rows, built into a table when opened
    body = table_html(compact)
    assert re.search(r"<tr class='add'><td>2</td><td>\+</td><td>(?:(?!</tr>).)*musaMalloc", body)
    assert re.search(r"<tr class='del'><td>2</td><td>-</td><td>(?:(?!</tr>).)*cudaMalloc", body)
    assert "&lt;/script&gt;" in body and "</script>" not in body
    assert "<span class='c1'>" in body  # pygments marked the comment
    # the file has been ported in place since: the old text is not there any more, list the edits
    src.write_text("int main() {\n  musaMalloc(&p, 4);\n  musaFree(p);\n}\n")
    body = _diffs(render_html(_v2_record([_v2_file(str(src))])))["0"]
    assert "class='diff edits'" in body and "2:3" in body and "cudart cudaMalloc" in body


def test_verify_results_show_their_first_difference(corpora_record):
    d = corpora_record.to_json()
    d["verify"] = {"backend": "emu", "archs": ["mp_22", "mp_31"], "programs": [  # docs/verify.md
        {"name": "vector_add", "archs": {"mp_22": {"verdict": "pass"}, "mp_31": {"verdict": "pass"}}},
        {"name": "warp32_only", "archs": {"mp_22": {"verdict": "fail", "reason": "output differs", "first_difference": {
            "where": "stdout line 3", "original": "sum 32", "port": "sum 128 <b>", "diff": ""}}}}]}
    html = render_html(d)
    assert 'id="verify"' in html and "2 pass" in html and "1 fail" in html
    row = html.split("<code>warp32_only</code>", 1)[1].split("</tr>", 1)[0]
    assert "<td>mp_22</td>" in row and "output differs" in row
    assert "stdout line 3\noriginal: sum 32\nport: sum 128 &lt;b&gt;" in row


def test_report_command_renders_every_format(hostile, tmp_path):
    run = hostile["dir"] / "run.json"
    for name, fmt in (("r.html", "html"), ("r.sarif", "sarif"), ("r.md", "markdown"), ("r.csv", "csv")):
        assert format_for(name) == fmt
        out = tmp_path / name
        r = CliRunner().invoke(main, ["report", str(run), "-o", str(out)])
        assert r.exit_code == 0, r.output
        assert out.stat().st_size > 100
    assert (tmp_path / "r.html").read_text() == hostile["html_path"].read_text()
    r = CliRunner().invoke(main, ["report", str(run), "--format", "stats-csv"])
    assert r.exit_code == 0 and r.output.startswith("scope,measure,kind,library,name,value\n")
    assert HOSTILE_NAME.replace('"', '""') in r.output  # quoted as CSV, not split


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab\n", max_size=40), st.lists(st.tuples(st.integers(0, 40), st.integers(0, 3),
                                                                 st.text(alphabet="cd\n", max_size=4)), max_size=4))
def test_diff_hunks_read_off_the_edits_are_a_true_diff(original, raw):
    """The report's line diff comes from the edits (a general diff was quadratic on long files):
    equal runs must be equal lines, changed runs must differ, and together they rebuild both sides."""
    from musify.report.diffs import _opcodes, _rebuild

    spans, pos = [], 0
    for start, length, new in sorted(raw):
        a = max(start, pos)
        if a > len(original):
            break
        b = min(len(original), a + length)
        spans.append((a, b, new))
        pos = b + 1
    old_lines, new_lines = original.split("\n"), _rebuild(original, spans).split("\n")
    ops = _opcodes(original, spans)
    assert (ops[0][1], ops[0][3], ops[-1][2], ops[-1][4]) == (0, 0, len(old_lines), len(new_lines))
    assert all(x[2] == y[1] and x[4] == y[3] for x, y in itertools.pairwise(ops))
    for tag, i1, i2, j1, j2 in ops:
        assert (old_lines[i1:i2] == new_lines[j1:j2]) == (tag == "equal")
