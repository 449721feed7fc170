"""Shim includes: added once per file at the right place, counted, and idempotent."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from musify.options import Options
from musify.runner import migrate_text

REPO = Path(__file__).resolve().parents[2]


def _migrate(text: str, ruleset, **opts):
    return migrate_text(text, "x.cuh", ruleset, Options(**opts))


def test_include_after_guard_once(ruleset) -> None:
    src = "#ifndef X_H\n#define X_H\n#include <cuda_fp16.h>\n__device__ __half f(__half a) { return hexp(hexp(a)); }\n#endif\n"
    new, ctx, _ = _migrate(src, ruleset)
    assert new.splitlines()[:4] == ["#ifndef X_H", "#define X_H", '#include "musify_compat/half_math.h"',
                                    "#include <cuda_fp16.h>"]
    assert new.count("musify_compat/half_math.h") == 1
    assert ctx.facts["shim_uses"] == 2 and ctx.facts["shim_headers"] == 1
    again, _, edits = _migrate(new, ruleset)
    assert again == new and not edits


def test_include_after_pragma_once_and_two_headers(ruleset) -> None:
    src = "// header\n#pragma once\nint g(int m, int v) { return __reduce_max_sync(m, v) + h2exp(v); }\n"
    new, _, _ = _migrate(src, ruleset)
    assert new.splitlines()[2:4] == ['#include "musify_compat/warp_reduce.h"', '#include "musify_compat/half_math.h"']


def test_include_before_first_include_or_at_top(ruleset) -> None:
    new, _, _ = _migrate("// c\n#include <a.h>\nauto y = hexp(x);\n", ruleset)
    assert new.splitlines()[1] == '#include "musify_compat/half_math.h"'
    new, _, _ = _migrate("auto y = hexp(x);", ruleset)
    assert new.startswith('#include "musify_compat/half_math.h"\nauto y = musify_hexp(x);')


def test_existing_include_not_repeated(ruleset) -> None:
    src = '#include "musify_compat/half_math.h"\nauto y = hexp(x);\n'
    new, _, _ = _migrate(src, ruleset)
    assert new.count("half_math.h") == 1 and "musify_hexp(x)" in new


def test_no_shims_keeps_calls(ruleset) -> None:
    src = "auto y = hexp(x);\n"
    new, ctx, _ = _migrate(src, ruleset, shims=False)
    assert new == src
    assert [d.id for d in ctx.diagnostics] == ["MU2061"]
    assert "shim_uses" not in ctx.facts


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_shim_headers_compile_with_nvcc(tmp_path) -> None:
    """The headers are real CUDA/MUSA code: they compile with nvcc through the CUDA face."""
    src = tmp_path / "use.cu"
    src.write_text(
        '#include "musify_compat/half_math.h"\n#include "musify_compat/warp_reduce.h"\n'
        "__global__ void k(__half* h, __half2* h2, int* r) {\n"
        "  h[0] = musify_hexp(h[0]); h2[0] = musify_h2exp(h2[0]);\n"
        "  r[0] = musify_reduce_add_sync(~0u, r[0]) + musify_reduce_min_sync(~0u, 1u)"
        " + musify_reduce_max_sync(~0u, -1);\n}\n"
    )
    result = subprocess.run(["nvcc", "-c", "-I", str(REPO / "shims" / "compat"), str(src), "-o",
                             str(tmp_path / "use.o")], check=False, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
