"""Reports render from the run record alone: HTML (self-contained page), CSV and JSON totals."""

from __future__ import annotations

import json

from click.testing import CliRunner

from musify.cli import main
from musify.records import RunRecord
from musify.report.html import render_html


def _record(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_text("#include <cuda_runtime.h>\nint main() { cudaFree(0); cudaFooBar(1);\n"
                              "  asm volatile(\"membar.gl;\"); }\n")
    out = tmp_path / "run.json"
    r = CliRunner().invoke(main, ["migrate", str(src), "--diff", "--json", str(out), "--report",
                                  str(tmp_path / "r.html")])
    assert r.exit_code == 1, r.output  # the inline asm is an error
    return RunRecord.from_json(json.loads(out.read_text())), tmp_path / "r.html"


def test_html_report_lists_what_needs_attention(tmp_path):
    record, written = _record(tmp_path)
    html = render_html(record)
    assert written.read_text() == html
    assert "MU1001" in html and "cudaFooBar" in html and "MU2040" in html
    assert html.index("error") < html.index("MU1001")  # errors are listed before warnings
    assert 'href="#doc-MU2040"' in html and 'id="doc-MU2040"' in html  # explained in the page itself
    assert html.startswith("<!doctype html>")


def test_report_command_rerenders(tmp_path):
    _record(tmp_path)
    r = CliRunner().invoke(main, ["report", str(tmp_path / "run.json"), "-o", str(tmp_path / "again.html")])
    assert r.exit_code == 0
    assert (tmp_path / "again.html").read_text() == (tmp_path / "r.html").read_text()
    r = CliRunner().invoke(main, ["report", str(tmp_path / "run.json"), "--format", "json"])
    assert json.loads(r.output)["references_unconverted"] == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "other"}')
    r = CliRunner().invoke(main, ["report", str(bad)])
    assert r.exit_code == 2 and "not a readable run record" in r.output
