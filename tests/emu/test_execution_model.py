"""The emulator's execution model and runtime, each feature checked by a small program.

The programs are built at -O1 (their speed does not matter), all of them up front on two worker
threads; each test then runs its program.
"""

from __future__ import annotations

import subprocess

import pytest
from click.testing import CliRunner
from emu_support import PROGRAMS, requires_cxx

from musify.emu.build import Build, BuildError, BuildOptions, build, build_many
from musify.emu.command import emu_run
from musify.emu.run import run

pytestmark = requires_cxx

O1 = BuildOptions(optimize=1)
JOBS = {
    "features": ([PROGRAMS / "features.cu"], O1),
    "warps32": ([PROGRAMS / "warps.cu"], BuildOptions(warp=32, optimize=1)),
    "warps128": ([PROGRAMS / "warps.cu"], BuildOptions(warp=128, optimize=1)),
    "divergent": ([PROGRAMS / "divergent.cu"], O1),
    "musa_face": ([PROGRAMS / "musa_face.mu"], O1),
    "cuda_name_in_port": ([PROGRAMS / "cuda_name_in_port.mu"], O1),
    "spin": ([PROGRAMS / "spin.cu"], O1),
    "stack_overflow": ([PROGRAMS / "stack_overflow.cu"], O1),
}


@pytest.fixture(scope="module")
def built() -> dict[str, Build | BuildError]:
    return dict(zip(JOBS, build_many(list(JOBS.values()), workers=2)))


def _run(built: dict[str, Build | BuildError], name: str, timeout: float = 120):
    program = built[name]
    assert isinstance(program, Build), getattr(program, "log", "")
    return run(program.executable, [], timeout=timeout)


def test_barriers_atomics_memory_errors_streams_events_printf_symbols(built):
    result = _run(built, "features")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith("PASS\n")
    assert "kernel says 42\n" in result.stdout


@pytest.mark.parametrize("warp", [32, 128])
def test_warp_collectives_and_cooperative_groups(built, warp):
    result = _run(built, f"warps{warp}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith("PASS\n")


def test_divergent_barrier_is_reported_with_file_and_line(built):
    result = _run(built, "divergent", timeout=60)
    assert not result.timed_out
    assert result.returncode == 3
    assert "PASS" not in result.stdout
    assert "divergent barrier" in result.stderr
    assert "divergent.cu:5: 16 thread(s) (0..15)" in result.stderr
    assert "divergent.cu:8: 48 thread(s) (16..63)" in result.stderr


def test_musa_face_runtime_and_driver(built):
    result = _run(built, "musa_face")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith("PASS\n")


def test_musa_face_rejects_a_cuda_name(built):
    error = built["cuda_name_in_port"]
    assert isinstance(error, BuildError)
    assert "cudaMalloc" in error.log
    assert "cuda_name_in_port.mu:5" in error.log  # #line points at the user's file


def test_a_program_that_never_ends_is_stopped(built):
    result = _run(built, "spin", timeout=2)
    assert result.timed_out and result.returncode == 124
    assert "did not finish within 2 s" in result.stderr


def test_fiber_stack_overflow_is_reported(built):
    result = _run(built, "stack_overflow", timeout=60)
    assert result.returncode == 3 and "PASS" not in result.stdout
    assert "a GPU thread overflowed its fiber stack of 65536 bytes" in result.stderr


def test_build_is_cached(built):
    again = build(*JOBS["divergent"])
    assert again.cached and again.executable == built["divergent"].executable


def test_emu_run_passes_arguments_and_exit_status():
    """`musify emu-run FILE --warp 128 -- ARGS`: the face from the extension, the program's status."""
    program = PROGRAMS / "args_and_status.mu"
    result = CliRunner().invoke(emu_run, [str(program), "--warp", "128", "--", "a", "--b"])
    assert result.exit_code == 7, result.output
    assert "warp 128 args a --b\n" in result.output
    result = CliRunner().invoke(emu_run, [str(PROGRAMS / "cuda_name_in_port.mu")])
    assert result.exit_code == 2 and "compilation failed" in result.output


def _asan_works(tmp_path) -> bool:
    src = tmp_path / "probe.cpp"
    src.write_text("int main() { return 0; }\n")
    exe = tmp_path / "probe"
    made = subprocess.run(["g++", "-fsanitize=address", str(src), "-o", str(exe)], capture_output=True, check=False)
    return made.returncode == 0 and subprocess.run([str(exe)], capture_output=True, check=False).returncode == 0


def test_sanitize_reports_a_heap_overflow_in_a_kernel(tmp_path):
    if not _asan_works(tmp_path):
        pytest.skip("the toolchain has no working AddressSanitizer (libasan)")
    clean = CliRunner().invoke(emu_run, ["--sanitize", str(PROGRAMS / "warps.cu")])
    assert clean.exit_code == 0 and "PASS" in clean.output, clean.output  # fibers under ASan; no leak noise
    result = CliRunner().invoke(emu_run, ["--sanitize", str(PROGRAMS / "heap_overflow.cu")])
    assert result.exit_code != 0
    assert "AddressSanitizer: heap-buffer-overflow" in result.output
    assert "in shift_left" in result.output  # the kernel is on the report's stack
    assert "PASS" not in result.output
