"""MU2050 once a file: a compatibility header's self-referential defines are one decision."""

from __future__ import annotations

import io

from musify.console import print_diagnostics
from musify.options import Options
from musify.runner import migrate_text

# llama.cpp's ggml/src/ggml-cuda/vendors/musa.h, in little: 136 such defines printed 136 warnings
COMPAT = ("#pragma once\n"
          "#include <musa_runtime.h>\n"
          "#define cudaMalloc musaMalloc\n"
          "#define cudaFree musaFree\n"
          "#define cudaStream_t \\\n    musaStream_t\n"
          "#define MY_ALLOC cudaMalloc\n")


class _Record:
    def __init__(self, diagnostics: list) -> None:
        self.files = [type("F", (), {"diagnostics": diagnostics})()]


def test_a_compatibility_header_gets_one_warning_with_the_other_defines_as_sites(ruleset) -> None:
    new, ctx, _ = migrate_text(COMPAT, "vendors/musa.h", ruleset, Options())
    found = [d for d in ctx.found.diagnostics if d.id == "MU2050"]
    assert [(d.line, d.name, d.sites) for d in found] == [(3, "cudaMalloc", ((4, 9), (5, 9)))]
    assert found[0].console().endswith("kept as written (the project already maps the name to MUSA) (+2 more in this file)")
    # every such define is still kept as written; an ordinary one is renamed
    assert new.splitlines()[2:6] == COMPAT.splitlines()[2:6]
    assert new.splitlines()[6] == "#define MY_ALLOC musaMalloc"
    printed = io.StringIO()
    print_diagnostics(_Record(found), printed)  # the compiled console lines say the same
    assert printed.getvalue() == found[0].console() + "\n"
