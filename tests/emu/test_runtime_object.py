"""The runtime compiled once per flag set (issue 12): programs link it and see declarations only;
builds whose instrumentation must cover the runtime stay header-only."""

from __future__ import annotations

from pathlib import Path

import pytest

from musify.emu import build as emu_build
from musify.emu.build import BuildOptions, build
from musify.emu.run import run
from tests.emu.emu_support import requires_cxx

PROGRAM = """#include <cstdio>
__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; __syncthreads(); }
int main() {
    float* d;
    cudaMallocManaged(&d, 64 * sizeof(float));
    for (int i = 0; i < 64; ++i) d[i] = i;
    scale<<<1, 64>>>(d, %s);
    cudaDeviceSynchronize();
    std::printf("%%g\\n", d[63]);
    return cudaFree(d) == cudaSuccess ? 0 : 1;
}
"""


def _program(tmp_path: Path, name: str, factor: str) -> Path:
    path = tmp_path / f"{name}.cu"
    path.write_text(PROGRAM % factor)
    return path


@requires_cxx
def test_programs_of_one_flag_set_share_one_compiled_runtime(tmp_path: Path) -> None:
    options = BuildOptions(optimize=1)
    if not emu_build.runtime_linked(options):
        pytest.skip("the face header is not precompiled here (a compiler other than g++, or MUSIFY_EMU_PCH=0)")
    first = build([_program(tmp_path, "a", "2.0f")], options)
    second = build([_program(tmp_path, "b", "3.0f")], options)
    runtimes = [[arg for arg in b.command if arg.endswith("runtime.o")] for b in (first, second)]
    assert runtimes[0] == runtimes[1] and len(runtimes[0]) == 1 and Path(runtimes[0][0]).is_file()
    assert "-DEMU_RUNTIME_LINKED" in first.command
    assert run(first.executable).stdout.strip() == "126"
    assert run(second.executable).stdout.strip() == "189"


@requires_cxx
def test_race_check_and_sanitizer_builds_stay_header_only(tmp_path: Path) -> None:
    for options in (BuildOptions(optimize=1, racecheck=True), BuildOptions(sanitize=True)):
        assert not emu_build.runtime_linked(options)
        cmd = emu_build.compile_command([_program(tmp_path, "c", "2.0f")], Path("prog"), options, [])
        assert "-DEMU_RUNTIME_LINKED" not in cmd
    # a project that sets the emulator's own macros: the runtime would not see them
    assert not emu_build.runtime_linked(BuildOptions(project_flags=("-DEMU_STACK_SIZE=131072",)))
