"""`musify rules show` and `musify rules stats` answer from the rules the engine uses."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from musify.cli import main
from musify.rules.command import find_records
from tests.conftest import install_rules, small_ruleset

RULES_YAML = """schema: musify-rules/1
library: cudart
kind: function
status: renamed
rules:
  - {cuda: cudaMalloc, musa: musaMalloc, section: memory, note: "the allocator"}
  - {cuda: cudaGraphInstantiateWithParams, status: unsupported, note: no MUSA counterpart}
  - {cuda: threadIdx, status: unchanged, kind: variable, library: cuda-device}
  - {cuda: cuda_runtime.h, musa: musa_runtime.h, kind: header}
  - {cuda: cutlass/, musa: mutlass/, kind: header, library: cutlass, inferred: true}
"""


@pytest.fixture(autouse=True)
def tiny_rules(tmp_path, monkeypatch):
    install_rules(tmp_path, monkeypatch, RULES_YAML)


def _run(*args):
    return CliRunner().invoke(main, ["rules", *args])


def test_show_a_cuda_name_gives_the_whole_record():
    r = _run("show", "cudaMalloc")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == "cudaMalloc -> musaMalloc"
    for expected in ("  kind: function", "  library: cudart", "  status: renamed", "  section: memory",
                     "  diag: -", "  inferred: no", "  note: the allocator", "  origin: rules/rt/r.yaml:6"):
        assert expected in lines


def test_show_by_musa_name_and_by_header_path():
    assert _run("show", "musaMalloc").output.startswith("cudaMalloc -> musaMalloc\n")
    assert _run("show", "<cuda_runtime.h>").output.startswith("cuda_runtime.h -> musa_runtime.h\n")
    r = _run("show", "cutlass/gemm/device/gemm.h")
    assert r.output.startswith("cutlass/ -> mutlass/\n") and "  inferred: yes" in r.output


def test_show_unsupported_and_unchanged():
    r = _run("show", "cudaGraphInstantiateWithParams")
    assert r.output.startswith("cudaGraphInstantiateWithParams\n")
    assert "  status: unsupported" in r.output and "  diag: MU1002" in r.output
    assert "  status: unchanged" in _run("show", "threadIdx").output


def test_show_unknown_name_fails():
    r = _run("show", "cudaNoSuchThing")
    assert r.exit_code == 1
    assert "no rule knows 'cudaNoSuchThing'" in r.output


def test_show_sees_user_tables(tmp_path):
    table = tmp_path / "mine.json"
    table.write_text('{"cudaMalloc": "myMalloc"}')
    r = _run("show", "cudaMalloc", "--rules", str(table))
    assert r.output.startswith("cudaMalloc -> myMalloc\n") and "  library: user" in r.output


def test_stats_text_and_json_agree():
    data = json.loads(_run("stats", "--json").output)
    by_lib = {d["library"]: d for d in data}
    assert by_lib["cudart"] == {"library": "cudart", "names": 3, "renamed": 2, "unchanged": 0, "unsupported": 1,
                                "shim": 0, "inferred": 0, "percent": 66.7}
    assert by_lib["cutlass"]["inferred"] == 1
    text = _run("stats").output.splitlines()
    assert text[0].split() == ["library", "names", "renamed", "unchanged", "unsupported", "shim", "inferred", "%"]
    assert text[-1].split() == ["total", "5", "3", "1", "1", "0", "1", "80.0"]


def test_find_records_qualified_names_with_spaces():
    rs = small_ruleset()
    assert [r.cuda for r in find_records(rs, "thrust :: cuda")] == ["thrust::cuda"]
    assert [r.cuda for r in find_records(rs, "thrust::musa")] == ["thrust::cuda"]


def test_show_lists_the_passes_and_agrees_with_a_run() -> None:
    """`rules show cudaBindTexture` says which passes act on it and which diagnostic they raise;
    a run raises exactly that, once per use."""
    import re as _re
    from pathlib import Path as _Path

    from musify.options import Options
    from musify.rules import load_ruleset
    from musify.rules.command import describe, find_records
    from musify.runner import migrate_text

    rules = load_ruleset(_Path(__file__).resolve().parents[1] / "rules")
    shown = describe(find_records(rules, "cudaBindTexture")[0], rules)
    assert "passes:" in shown and "identifiers: renames to musaBindTexture, raises MU2031" in shown
    said = set(_re.findall(r"raises (MU\d{4})", shown.split("passes:")[1])) - {"MU2050"}
    _, ctx, _ = migrate_text("void f(float* p) { cudaBindTexture(0, tex, p); }\n", "t.cu", rules, Options())
    raised = [d.id for d in ctx.diagnostics if d.name == "cudaBindTexture"]
    assert raised == sorted(said) == ["MU2031"]
    shfl = describe(find_records(rules, "__shfl_down_sync")[0], rules)
    assert "warp_size: shuffle-offset" in shfl and "warp_size: lane-mask-arg" in shfl
