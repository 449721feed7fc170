"""MU2026: a project's own warp-size constant defined as 32, reported once at the definition.

The forms are the ones met in real trees: llama.cpp's `#define WARP_SIZE 32`, vLLM's
`constexpr int kWarpSize = 32;` and `uint32_t constexpr kWARP_SIZE = 32U;`, CUTLASS's
`static int const kWarpSize = 32;`, flash-attn's `THREADS_PER_WARP`."""

from __future__ import annotations

import pytest

from musify.options import Options
from musify.runner import migrate_text

KERNEL = "__global__ void k(float *x) { x[threadIdx.x / WARP_SIZE] = 0; }\n"


def findings(text: str, ruleset, path: str = "common.cuh", **options) -> list[tuple[int, str, str]]:
    _, ctx, _ = migrate_text(text, path, ruleset, Options(**options))
    return [(d.line, d.severity, d.message) for d in ctx.found.diagnostics if d.id == "MU2026"]


@pytest.mark.parametrize(("line", "spelled"), [
    ("#define WARP_SIZE 32", "#define WARP_SIZE 32"),
    ("  #define WARP_SIZE (32)  // lanes", "#define WARP_SIZE (32)"),
    ("static constexpr int kWarpSize = 32;", "static constexpr int kWarpSize = 32;"),
    ("uint32_t constexpr kWARP_SIZE = 32U;", "uint32_t constexpr kWARP_SIZE = 32U;"),
    ("struct T { static int const kWarpSize = 32; };", "static int const kWarpSize = 32;"),
    ("constexpr uint32_t THREADS_PER_WARP = 32;", "constexpr uint32_t THREADS_PER_WARP = 32;"),
    ("#define WARP_SIZE 32  // was 32", "#define WARP_SIZE 32"),  # two 32s a line: one finding
    ("#define MINIMAX_REDUCE_RMS_WARP_SIZE 32", "#define MINIMAX_REDUCE_RMS_WARP_SIZE 32"),  # vLLM: no "min" word
])
def test_a_warp_size_constant_of_32_is_reported_at_its_definition(line, spelled, ruleset) -> None:
    found = findings(f"{line}\n{KERNEL}", ruleset)
    assert len(found) == 1
    at, severity, message = found[0]
    assert (at, severity) == (1, "warning")
    assert message.startswith(f"'{spelled}' fixes the warp size at 32 for every use of ")
    assert "a warp on mp_22 has 128 lanes" in message


@pytest.mark.parametrize("line", [
    "#define NUM_WARPS 32",  # a count of warps, not a warp's size
    "#define WARPS_PER_BLOCK 32",
    "#define C10_WARP_SIZE_LOWER_BOUND 32",  # PyTorch's: a lower bound, true of 128 lanes too
    "constexpr int kMinWarpSize = 32;",
    "#define WARP_SIZE warpSize",  # the port already
    "#define WARP_SIZE 320",
    "const int warp_size = 32 * 2;",
    "int warp_size = 32;",  # a variable, not a constant
    "// #define WARP_SIZE 32",
    "/* constexpr int kWarpSize = 32; */",
    'const char *doc = "#define WARP_SIZE 32";',
    "#define PAD 1 // #define WARP_SIZE 32",
])
def test_what_is_not_a_warp_size_constant_of_32_is_not_reported(line, ruleset) -> None:
    assert findings(f"{line}\n{KERNEL}", ruleset) == []


def test_a_file_without_device_code_is_not_the_ports_business(ruleset) -> None:
    """llama.cpp's SYCL backend defines `QK_WARP_SIZE 32` in a header with no CUDA device code;
    a header with a device qualifier, or a CUDA file by its name, is reported."""
    assert findings("#define QK_WARP_SIZE 32\n", ruleset, "ggml-sycl/presets.hpp") == []
    assert len(findings("#define WARP_SIZE 32\n__device__ int lane();\n", ruleset, "compat.h")) == 1
    assert len(findings("#define WARP_SIZE 32\n", ruleset, "common.cuh")) == 1


def test_the_severity_follows_the_arch_and_the_reverse_direction_says_nothing(ruleset) -> None:
    assert [f[1] for f in findings(f"#define WARP_SIZE 32\n{KERNEL}", ruleset, arch="mp_31")] == ["note"]
    assert findings(f"#define WARP_SIZE 32\n{KERNEL}", ruleset, "common.muh", reverse=True) == []


def test_a_minified_line_is_read_once(ruleset) -> None:
    """A generated file's single line with thousands of 32s: read once, in linear time."""
    from musify.passes.hazards.warp_constants import definitions

    text = "int a[] = {" + "x=32;" * 100_000 + "}; const int kWarpSize = 32;"
    assert [name for _, _, name in definitions(text)] == ["kWarpSize"]
