"""Run record v2 (`musify-run/2`, docs/record.md): spans on every diagnostic, every edit kept with
what it replaced, references counted apart from include rewrites and shim includes, and one
`Report` deciding totals and the exit code, so the console, CSV and HTML agree."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from musify.cli import main
from musify.diagnostics import at_least, make
from musify.records import FileResult, RunRecord
from musify.report.summary import Report

REPO = Path(__file__).resolve().parents[1]
CORPUS = ["vector_add", "warp_agnostic", "library_tour", "multi_file", "reduce_shared"]


def _apply_recorded_edits(text: str, edits: list[dict]) -> str:
    """Rebuild a port from the original and the record's edits alone."""
    starts = [0]
    for line in text.split("\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(pos: list[int]) -> int:
        return starts[pos[0] - 1] + pos[1] - 1

    out, at = [], 0
    for e in edits:
        s, t = offset(e["start"]), offset(e["end"])
        assert text[s:t] == e["old"], e
        out.append(text[at:s])
        out.append(e["new"])
        at = t
    out.append(text[at:])
    return "".join(out)


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("v2")
    src = tmp / "src"
    for name in CORPUS:
        shutil.copytree(REPO / "corpora" / name, src / name, ignore=shutil.ignore_patterns("expected"))
    r = CliRunner().invoke(main, ["migrate", str(src), "-o", str(tmp / "out"), "--json", str(tmp / "run.json")])
    assert r.exit_code in (0, 1), r.output
    return src, tmp / "out", json.loads((tmp / "run.json").read_text()), r


def test_every_diagnostic_has_a_span_and_an_origin(corpus_run):
    _src, _out, record, _r = corpus_run
    diags = [d for f in record["files"] for d in f["diagnostics"]]
    assert diags, "the corpus raises diagnostics"
    for d in diags:
        assert (d["end_line"], d["end_column"]) >= (d["line"], d["column"]), d
        assert d["origin"], d
        assert isinstance(d["args"], dict)
    named = [d for d in diags if d["name"] and d["end_line"] == d["line"]]
    assert any(d["end_column"] > d["column"] for d in named), "named constructs get a real width"


def test_the_recorded_edits_rebuild_every_port(corpus_run):
    src, out, record, _r = corpus_run
    changed = [f for f in record["files"] if f["status"] == "migrated"]
    assert len(changed) >= len(CORPUS)
    for f in changed:
        assert f["edit_count"] == len(f["edits"]), f["path"]
        original = (src / f["rel"]).read_text(encoding="utf-8")
        port = (out / f["output_path"]).read_text(encoding="utf-8")
        assert _apply_recorded_edits(original, f["edits"]) == port, f["path"]
        if port == original:  # changed by its rename alone
            assert Path(f["output_path"]).name != Path(f["rel"]).name and not f["edits"]
        else:
            assert f["edits"], f["path"]


def test_references_are_not_include_rewrites_or_shim_includes(tmp_path):
    (tmp_path / "a.cu").write_text(
        "#include <cuda_runtime.h>\n"
        "__global__ void k(int *o, int v) { *o = __reduce_add_sync(__activemask(), v); }\n"
        "int main() { int *p; cudaMalloc(&p, 4); return 0; }\n")
    r = CliRunner().invoke(main, ["migrate", str(tmp_path / "a.cu"), "--diff", "--json", str(tmp_path / "r.json")])
    assert r.exit_code == 0, r.output
    f = json.loads((tmp_path / "r.json").read_text())["files"][0]
    assert f["renamed"] == {"__reduce_add_sync": 1, "cudaMalloc": 1}
    assert f["references"] == {"converted": 2, "unconverted": 0}
    assert f["include_rewrites"] == 1 and f["shim_includes"] == 1
    assert f["edit_count"] == 4
    assert {e["category"] for e in f["edits"]} == {"reference", "include", "shim-include"}


def test_json_lite_leaves_the_edit_list_out(tmp_path):
    (tmp_path / "a.cu").write_text("int main() { int *p; cudaMalloc(&p, 4); return 0; }\n")
    r = CliRunner().invoke(main, ["migrate", str(tmp_path / "a.cu"), "--diff", "--json-lite",
                                  "--json", str(tmp_path / "r.json")])
    assert r.exit_code == 0, r.output
    f = json.loads((tmp_path / "r.json").read_text())["files"][0]
    assert f["edits"] is None and f["edit_count"] == 1


def _console_totals(output: str) -> dict:
    edits = re.search(r"edits\s+(\d+) in (\d+) lines", output)
    refs = re.search(r"references\s+(\d+) converted, (\d+) not converted", output)
    diags = re.search(r"diagnostics\s+(\d+) errors, (\d+) warnings, (\d+) notes", output)
    return {"edits": int(edits[1]), "lines_changed": int(edits[2]), "converted": int(refs[1]),
            "unconverted": int(refs[2]), "errors": int(diags[1]), "warnings": int(diags[2]), "notes": int(diags[3])}


def test_csv_and_html_reproduce_the_console_totals(corpus_run, tmp_path):
    _src, _out, record_json, r = corpus_run
    shown = _console_totals(r.output)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record_json))
    totals = Report(RunRecord.from_json(record_json)).totals
    assert shown["edits"] == totals["edits"] and shown["converted"] == totals["references_converted"]
    csv_out = CliRunner().invoke(main, ["report", str(path), "--format", "csv"])
    assert csv_out.exit_code == 0, csv_out.output
    rows = list(csv.DictReader(io.StringIO(csv_out.output)))
    total = next(row for row in rows if row["path"] == "TOTAL")
    assert int(total["edits"]) == shown["edits"]
    assert int(total["lines_changed"]) == shown["lines_changed"]
    assert int(total["errors"]) == shown["errors"] and int(total["warnings"]) == shown["warnings"]
    html = CliRunner().invoke(main, ["report", str(path), "--format", "html"])
    assert html.exit_code == 0
    assert f"<b>{shown['lines_changed']}</b>lines changed" in html.output
    assert f"of {shown['converted'] + shown['unconverted']} CUDA references converted" in html.output
    again = CliRunner().invoke(main, ["report", str(path)])
    assert _console_totals(again.output) == shown


def test_check_says_why_it_fails(tmp_path):
    (tmp_path / "a.cu").write_text("int main() { int *p; cudaMalloc(&p, 4); return 0; }\n")
    r = CliRunner().invoke(main, ["check", str(tmp_path / "a.cu")])
    assert r.exit_code == 1
    assert "see the errors above" not in r.output
    assert "failed: 1 file would be migrated" in r.output
    (tmp_path / "b.mu").write_text("int main() { return 0; }\n")
    ok = CliRunner().invoke(main, ["check", str(tmp_path / "b.mu")])
    assert ok.exit_code == 0 and "failed:" not in ok.output


def test_report_exit_code_counts_port_failures_of_verify():
    record = RunRecord("0", "musify migrate", [], "none", {}, "d")
    assert Report(record).exit_code == 0
    record.verify = {"programs": [{"name": "p", "runs": [{"arch": "mp_22", "verdict": "original-fails"}]}]}
    assert Report(record).exit_code == 0, "a program that fails on the original is not the port's fault"
    record.verify["programs"][0]["runs"].append({"arch": "mp_31", "verdict": "fail"})
    assert Report(record).exit_code == 1
    assert Report(record).problems() == ["1 verify run failed on the port"]


def test_a_v1_record_is_refused_with_a_hint(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"schema": "musify-run/1", "files": []}))
    r = CliRunner().invoke(main, ["report", str(path)])
    assert r.exit_code == 2 and "older musify" in r.output


@pytest.mark.parametrize("fail_on", ["note", "warning", "error"])
def test_report_counts_diagnostics_at_or_above_fail_on_as_asked_one_by_one(fail_on):
    """`problems` counts each severity once; the count is the one asked diagnostic by diagnostic."""
    severities = ["note", "error", "warning", "error", "note", "note"]
    files = [FileResult(f"{i}.cu", f"{i}.mu", "cuda-source", "migrated",
                        diagnostics=[make("MU1001", f"{i}.cu", 1, 1, "cuX", s) for s in severities[i:i + 2]])
             for i in range(0, len(severities), 2)]
    record = RunRecord("0", "musify migrate", [], "none", {}, "d", files=files, fail_on=fail_on)
    at = sum(1 for f in files for d in f.diagnostics if at_least(d.severity, fail_on))
    worst = "errors" if fail_on == "error" else f"diagnostics at or above {fail_on}"
    assert Report(record).problems() == [f"{at} {worst}"]
    files[0].diagnostics.append(make("MU1001", "0.cu", 1, 1, "cuX", "fatal"))
    with pytest.raises(KeyError, match="fatal"):
        Report(record).problems()
