"""`musify migrate --analyze`: nothing written; per file, library and directory, how much ports by
itself, through shims, or by hand, with an effort estimate, on the console and in the record."""

from __future__ import annotations

import json

from click.testing import CliRunner

from musify.cli import main
from musify.report.html import render_html
from musify.report.view import EFFORT_HOURS

EASY = "#include <cuda_runtime.h>\nint main() { float *p; cudaMalloc(&p, 4); cudaFree(p); return 0; }\n"
HARD = ("#include <cudnn.h>\nint main() { cudnnHandle_t h; cudnnCreate(&h); cudaDeviceSynchronize(); "
        "return 0; }\n")


def _tree(tmp_path):
    src = tmp_path / "src"
    (src / "easy").mkdir(parents=True)
    (src / "hard").mkdir()
    (src / "easy" / "a.cu").write_text(EASY)
    (src / "hard" / "b.cu").write_text(HARD)
    (src / "README").write_text("not code\n")
    return src


def _snapshot(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_analyze_writes_nothing_and_reports_the_work_left(tmp_path):
    src = _tree(tmp_path)
    before = _snapshot(src)
    run = tmp_path / "run.json"
    r = CliRunner().invoke(main, ["migrate", str(src), "--analyze", "--json", str(run)])
    assert r.exit_code == 0, r.output
    assert _snapshot(src) == before and sorted(p.name for p in tmp_path.iterdir()) == ["run.json", "src"]
    record = json.loads(run.read_text())
    section = record["analysis"]
    totals = record["totals"]
    assert section["totals"]["automatic"] == totals["references_converted"] > 0
    hard = section["directories"]["hard"]
    easy = section["directories"]["easy"]
    cudnn = [d for f in record["files"] for d in f["diagnostics"] if d["id"] == "MU2030"]
    assert hard["automatic"] == 1  # cudaDeviceSynchronize
    assert cudnn and hard["manual"] == len(cudnn) and hard["effort_hours"] == EFFORT_HOURS["high"] * len(cudnn)
    assert easy == {**easy, "manual": 0, "effort_hours": 0.0, "shims": 0} and easy["automatic"] == 2
    assert section["libraries"]["cudnn"]["manual"] == len(cudnn)
    assert {f["path"].rsplit("/", 1)[-1]: f["readiness"] for f in section["files"]} == {
        "a.cu": "automatic", "b.cu": "manual"}
    # the console says the same
    assert f"{section['totals']['automatic']} automatic" in r.output
    line = next(x for x in r.output.splitlines() if x.startswith("hard "))
    assert line.split()[1:] == [str(hard["automatic"]), "0", str(len(cudnn)), f"{hard['effort_hours']:g}"]
    # and so does the report, re-rendered from the record
    html = render_html(record)
    assert 'id="analysis"' in html and "<td><code>hard</code></td>" in html


def test_analyze_is_its_own_output_mode(tmp_path):
    src = _tree(tmp_path)
    r = CliRunner().invoke(main, ["migrate", str(src), "--analyze", "-o", str(tmp_path / "out")])
    assert r.exit_code == 2 and "choose exactly one" in r.output
    assert not (tmp_path / "out").exists()
