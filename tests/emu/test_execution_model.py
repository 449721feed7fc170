"""The emulator's execution model and runtime, each feature checked by a small program."""

from __future__ import annotations

import pytest
from emu_support import PROGRAMS, build_and_run, requires_cxx

from musify.emu.build import BuildError, BuildOptions, build
from musify.emu.run import run

pytestmark = requires_cxx


def test_barriers_atomics_memory_errors_streams_events_printf_symbols():
    result = build_and_run([PROGRAMS / "features.cu"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith("PASS\n")
    assert "kernel says 42\n" in result.stdout


@pytest.mark.parametrize("warp", [32, 128])
def test_warp_collectives_and_cooperative_groups(warp):
    result = build_and_run([PROGRAMS / "warps.cu"], BuildOptions(warp=warp))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith("PASS\n")


def test_divergent_barrier_is_reported_with_file_and_line():
    result = build_and_run([PROGRAMS / "divergent.cu"], timeout=60)
    assert not result.timed_out
    assert result.returncode == 3
    assert "PASS" not in result.stdout
    assert "divergent barrier" in result.stderr
    assert "divergent.cu:5: 16 thread(s) (0..15)" in result.stderr
    assert "divergent.cu:8: 48 thread(s) (16..63)" in result.stderr


def test_musa_face_runtime_and_driver():
    result = build_and_run([PROGRAMS / "musa_face.mu"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith("PASS\n")


def test_musa_face_rejects_a_cuda_name():
    with pytest.raises(BuildError) as info:
        build([PROGRAMS / "cuda_name_in_port.mu"])
    assert "cudaMalloc" in info.value.log
    assert "cuda_name_in_port.mu:5" in info.value.log  # #line points at the user's file


def test_a_program_that_never_ends_is_stopped():
    result = run(build([PROGRAMS / "spin.cu"]).executable, timeout=2)
    assert result.timed_out and result.returncode == 124
    assert "did not finish within 2 s" in result.stderr


def test_build_is_cached():
    first = build([PROGRAMS / "divergent.cu"])
    again = build([PROGRAMS / "divergent.cu"])
    assert again.cached and again.executable == first.executable
