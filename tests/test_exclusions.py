"""Exclusion markers (MUSIFY_EXCL_LINE / START / STOP) in `musify migrate`: kept lines, MU4xxx."""

from __future__ import annotations

from musify.options import Options
from musify.passes.exclusions import find_exclusions
from musify.runner import migrate_text
from tests.conftest import small_ruleset


def _migrate(text: str):
    new, ctx, _ = migrate_text(text, "k.cu", small_ruleset(), Options())
    return new, [d.id for d in ctx.diagnostics], ctx


def test_line_marker_keeps_only_that_line():
    new, ids, ctx = _migrate("cudaFree(a); // MUSIFY_EXCL_LINE\ncudaFree(b);\n")
    assert new == "cudaFree(a); // MUSIFY_EXCL_LINE\nmusaFree(b);\n"
    assert ids == []
    assert ctx.facts["excluded_lines"] == 1


def test_block_keeps_marker_lines_and_everything_between():
    text = "cudaFree(a);\n/* MUSIFY_EXCL_START */ cudaFree(b);\ncudaMalloc(&c, 1);\ncudaFree(d); // MUSIFY_EXCL_STOP\ncudaFree(e);\n"
    new, ids, _ = _migrate(text)
    assert new == ("musaFree(a);\n/* MUSIFY_EXCL_START */ cudaFree(b);\ncudaMalloc(&c, 1);\n"
                   "cudaFree(d); // MUSIFY_EXCL_STOP\nmusaFree(e);\n")
    assert ids == []


def test_includes_inside_a_block_are_kept():
    new, _, _ = _migrate("// MUSIFY_EXCL_START\n#include <cuda_runtime.h>\n// MUSIFY_EXCL_STOP\n#include <cuda_runtime.h>\n")
    assert new == "// MUSIFY_EXCL_START\n#include <cuda_runtime.h>\n// MUSIFY_EXCL_STOP\n#include <musa_runtime.h>\n"


def test_stray_stop_warns_and_excludes_nothing():
    new, ids, ctx = _migrate("cudaFree(a);\n// MUSIFY_EXCL_STOP\ncudaFree(b);\n")
    assert new == "musaFree(a);\n// MUSIFY_EXCL_STOP\nmusaFree(b);\n"
    assert ids == ["MU4001"]
    assert (ctx.diagnostics[0].line, ctx.diagnostics[0].column) == (2, 4)


def test_unclosed_start_excludes_to_the_end_and_warns_at_the_start():
    new, ids, ctx = _migrate("cudaFree(a);\n// MUSIFY_EXCL_START\ncudaFree(b);\ncudaFree(c);\n")
    assert new == "musaFree(a);\n// MUSIFY_EXCL_START\ncudaFree(b);\ncudaFree(c);\n"
    assert ids == ["MU4002"]
    assert ctx.diagnostics[0].line == 2


def test_nested_start_and_line_inside_block_are_reported():
    text = ("// MUSIFY_EXCL_START\ncudaFree(a); // MUSIFY_EXCL_LINE\n// MUSIFY_EXCL_START\n"
            "// MUSIFY_EXCL_STOP\ncudaFree(b);\n")
    new, ids, ctx = _migrate(text)
    assert new.endswith("// MUSIFY_EXCL_STOP\nmusaFree(b);\n")  # the first STOP ends the only block
    assert ids == ["MU4004", "MU4003"]
    assert all("opened at line 1" in d.message for d in ctx.diagnostics)


def test_no_markers_no_spans():
    assert find_exclusions("cudaFree(a);\n").spans == []


def test_events_in_text_order():
    found = find_exclusions("a // MUSIFY_EXCL_LINE\n// MUSIFY_EXCL_START\nb\n// MUSIFY_EXCL_STOP\n")
    assert [(e.kind, e.line) for e in found.events] == [("line", 1), ("open", 2), ("close", 4)]
    assert len(found.spans) == 2
