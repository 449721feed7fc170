"""A vendored copy of a library MUSA ships its own port of (CUTLASS in `third_party/cutlass`) is
one decision, replacing it: the analysis, the HTML and the Markdown report count it apart and
leave it out of the effort estimate, while the run still migrates it and lists its findings."""

from __future__ import annotations

import json

from click.testing import CliRunner

from musify.cli import main
from musify.report.html import render_html
from musify.report.markdown import render_markdown
from musify.report.vendored import find_copies
from musify.report.view import EFFORT_HOURS

PTX = '__device__ inline unsigned lane() {{ unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }}\n'


def _tree(tmp_path):
    src = tmp_path / "src"
    copy = src / "third_party" / "cutlass"
    for rel in ("include/cutlass/cutlass.h", "include/cute/arch/mma.hpp", "tools/util.cu"):
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_text("#pragma once\n" + PTX.format())
    (src / "csrc").mkdir()
    (src / "csrc" / "kernel.cu").write_text(
        "#include <cudnn.h>\n#include <cutlass/cutlass.h>\n"
        "int main() { cudnnHandle_t h; cudnnCreate(&h); float *p; cudaMalloc(&p, 4); return 0; }\n")
    return src


def _analyze(path, record):
    r = CliRunner().invoke(main, ["migrate", str(path), "--analyze", "--json", str(record)])
    assert r.exit_code in (0, 1), r.output
    return r.output, json.loads(record.read_text())


def test_a_vendored_copy_is_counted_apart_and_not_in_the_effort(tmp_path):
    output, record = _analyze(_tree(tmp_path), tmp_path / "run.json")
    diags = [d for f in record["files"] for d in f["diagnostics"]]
    in_copy = [d for d in diags if "third_party/cutlass/" in d["path"]]
    own = [d for d in diags if "third_party" not in d["path"]]
    assert len(in_copy) == 3 and {d["id"] for d in in_copy} == {"MU2040"}  # still found and listed
    assert own and {d["id"] for d in own} == {"MU2030"}
    section = record["analysis"]
    own_hours = sum(EFFORT_HOURS["high"] for _ in own)
    assert section["totals"]["effort_hours"] == own_hours
    assert section["totals"]["files"] == 1 and set(section["directories"]) == {"csrc"}
    assert "MU2040" not in json.dumps(section["libraries"]) and all("third_party" not in f["path"]
                                                                    for f in section["files"])
    copy = section["vendored"]["third_party/cutlass"]
    assert copy["library"] == "CUTLASS" and copy["counterpart"] == "MUTLASS"
    assert copy["files"] == 3 and copy["manual"] == 3 and copy["effort_hours"] == 3 * EFFORT_HOURS["high"]
    assert f"estimated effort {own_hours:g} h" in output
    assert "vendored CUTLASS in third_party/cutlass: 3 files, 3 manual places" in output
    assert "replace it with MUSA's MUTLASS" in output
    html = render_html(record)
    assert f"<b>{own_hours} h</b>estimated hand work (1 files need it)" in html  # the copy's 3 not among them
    assert "not counted: vendored CUTLASS in <code>third_party/cutlass</code>, 3 findings" in html
    md = render_markdown(record)
    assert f"| {own_hours:g} h |" in md and "vendored CUTLASS in third\\_party/cutlass, 3 findings" in md


def test_a_cutlass_checkout_itself_is_ported_and_counted(tmp_path):
    """Run on the library's own tree (the copy's root is the input root), it is the project."""
    copy = _tree(tmp_path) / "third_party" / "cutlass"
    output, record = _analyze(copy, tmp_path / "run.json")
    section = record["analysis"]
    assert section["vendored"] == {}
    assert section["totals"]["effort_hours"] == 3 * EFFORT_HOURS["high"] and "vendored" not in output
    assert "not counted" not in render_html(record)


def test_only_the_outermost_copy_and_only_beside_its_main_header():
    files = [{"rel": r, "path": "/x/" + r} for r in (
        "a/cutlass/include/cutlass/cutlass.h",
        "a/cutlass/tools/util/include/cutlass/cutlass.h",  # a copy inside the copy: part of it
        "b/include/cutlass/gemm.h",  # no main header: the project's own extension, not a copy
        "include/cutlass/cutlass.h")]  # the input root itself
    assert [c.root for c in find_copies(files)] == ["a/cutlass"]
