"""SARIF 2.1.0: valid against the OASIS schema, one result per diagnostic, rules described, fixes
for the renames the record holds."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from musify.report.sarif import render_sarif

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA.read_text())
    assert schema["id"].endswith("/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


def _errors(validator, log) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log)]


def test_corpora_sarif_validates_and_has_one_result_per_diagnostic(corpora_record, validator):
    log = json.loads(render_sarif(corpora_record))
    assert _errors(validator, log) == []
    run = log["runs"][0]
    diags = [d for f in corpora_record.files for d in f.diagnostics]
    assert len(run["results"]) == len(diags) > 0
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert set(rules) == {d.id for d in diags}
    for r in run["results"]:
        rule = run["tool"]["driver"]["rules"][r["ruleIndex"]]
        assert rule["id"] == r["ruleId"]
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["markdown"]
        assert rule["helpUri"].endswith(f"/diagnostics/{r['ruleId']}.md")
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        region = r["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    # the inferred renames (MU1004) and rewritten arch guards carry the edit as a fix
    edits = {(f.path, tuple(e["start"]), e["new"]) for f in corpora_record.files for e in f.edits or []}
    fixed = [r for r in run["results"] if r.get("fixes")]
    assert {r["ruleId"] for r in fixed} >= {"MU1004"}
    for r in fixed:
        change = r["fixes"][0]["artifactChanges"][0]
        region = change["replacements"][0]["deletedRegion"]
        at = r["locations"][0]["physicalLocation"]["region"]
        path = next(d.path for d in diags if r["message"]["text"] == d.message
                    and (d.line, d.column) == (at["startLine"], at["startColumn"])
                    and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(
                        d.path.rsplit("/", 1)[-1]))
        assert (path, (region["startLine"], region["startColumn"]),
                change["replacements"][0]["insertedContent"]["text"]) in edits
    first = min(diags, key=lambda d: (d.path, d.line, d.column))
    match = [r for r in run["results"] if r["ruleId"] == first.id
             and r["locations"][0]["physicalLocation"]["region"]["startLine"] == first.line]
    assert match and match[0]["message"]["text"] == first.message


def test_hostile_sarif_validates(hostile, validator):
    assert _errors(validator, json.loads(hostile["sarif"])) == []


def test_a_rename_with_a_diagnostic_carries_its_fix(validator):
    diag = {"id": "MU1004", "severity": "note", "path": "src/a b.cu", "line": 3, "column": 5, "end_line": 3,
            "end_column": 14, "message": "'ncclSum' renamed to 'mcclSum' by the naming pattern", "name": "ncclSum",
            "args": {}, "origin": "rule:ncclSum", "sites": [[9, 5]], "verify": ""}
    edit = {"start": [3, 5], "end": [3, 12], "old": "ncclSum", "new": "mcclSum", "rule": "ncclSum",
            "library": "nccl", "kind": "enumerator", "inferred": True}
    other = {"start": [1, 10], "end": [1, 20], "old": "nccl.h", "new": "mccl.h", "rule": "nccl.h",
             "library": "nccl", "kind": "header", "inferred": False}
    record = {"schema": "musify-run/2", "tool_version": "0", "command": "musify check src", "exit_code": 0,
              "started": "2026-01-02T03:04:05+00:00",
              "files": [{"path": "src/a b.cu", "status": "migrated", "edits": [other, edit], "diagnostics": [diag]}]}
    log = json.loads(render_sarif(record))
    assert _errors(validator, log) == []
    result = log["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/a%20b.cu"
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 14}
    (fix,) = result["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["replacements"] == [{"deletedRegion": {"startLine": 3, "startColumn": 5, "endLine": 3,
                                                          "endColumn": 12}, "insertedContent": {"text": "mcclSum"}}]
    assert result["relatedLocations"][0]["physicalLocation"]["region"] == {"startLine": 9, "startColumn": 5}
    assert log["runs"][0]["invocations"][0]["startTimeUtc"] == "2026-01-02T03:04:05+00:00"


def test_check_writes_sarif_for_code_scanning(tmp_path, validator):
    from click.testing import CliRunner

    from musify.cli import main

    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text("__global__ void k(float *v) { v[0] = __shfl_down_sync(0xffffffff, v[0], 1); }\n"
                              "int main() { cudaDeviceSynchronize(); return 0; }\n")
    out = tmp_path / "scan.sarif"
    r = CliRunner().invoke(main, ["check", str(src), "--sarif", str(out)])
    assert r.exit_code == 1  # the file would change: check fails, and the SARIF says why
    log = json.loads(out.read_text())
    assert _errors(validator, log) == []
    assert log["runs"][0]["invocations"][0]["exitCode"] == 1
    assert {x["ruleId"] for x in log["runs"][0]["results"]} == {"MU2020"}
