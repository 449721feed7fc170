"""Emulator gaps met on real programs (issue 10 part 8), each with a checked answer.

coalesced_threads(), `typedef __align__(n) T Type;`, a source another source includes, library
headers the emulator does not implement (declarations only: calls stop naming the call), and the
shared-memory race check. Built at -O1 up front on two worker threads, as the other modules do.
"""

from __future__ import annotations

import pytest
from emu_support import PROGRAMS, requires_cxx

from musify.emu.build import Build, BuildError, BuildOptions, build_many, drop_included_sources
from musify.emu.run import run

pytestmark = requires_cxx

O1 = BuildOptions(optimize=1)
RACE = BuildOptions(optimize=1, racecheck=True)
INCLUDED = PROGRAMS / "included_source"
COMMON = PROGRAMS / "common_header"
JOBS = {
    "gaps32": ([PROGRAMS / "gaps.cu"], O1),
    "gaps128": ([PROGRAMS / "gaps.cu"], BuildOptions(optimize=1, warp=128)),
    "included": ([INCLUDED / "main.cu", INCLUDED / "kernels.cu"], O1),
    "uses_none": ([COMMON / "uses_none.cu"], O1),
    "calls_cudnn": ([COMMON / "calls_cudnn.cu"], O1),
    "port_calls_mccl": ([COMMON / "port_calls_mccl.mu"], O1),
    "transpose": ([PROGRAMS / "transpose8x8.cu"], O1),
    "transpose_race": ([PROGRAMS / "transpose8x8.cu"], RACE),
    "racecheck": ([PROGRAMS / "racecheck.cu"], RACE),
}


@pytest.fixture(scope="module")
def built() -> dict[str, Build | BuildError]:
    return dict(zip(JOBS, build_many(list(JOBS.values()), workers=2)))


def _run(built, name: str, *args: str):
    program = built[name]
    assert isinstance(program, Build), getattr(program, "log", "")
    return run(program.executable, list(args), timeout=120)


@pytest.mark.parametrize("warp", [32, 128])
def test_coalesced_threads_aggregated_atomics_reduce_ballot_and_align_typedefs(built, warp):
    result = _run(built, f"gaps{warp}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith("PASS\n")
    assert "91 odd values" in result.stdout


def test_a_source_included_by_another_is_compiled_once(built):
    result = _run(built, "included")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "PASS\n"


def test_drop_included_sources_keeps_order_and_the_includer(tmp_path):
    (tmp_path / "a.cu").write_text('#include "inc/b.cuh"\n')
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "b.cuh").write_text('#include "../c.cu"\n')
    (tmp_path / "c.cu").write_text("int c;\n")
    (tmp_path / "d.cu").write_text("int d;\n")
    sources = [tmp_path / "d.cu", tmp_path / "c.cu", tmp_path / "a.cu"]
    assert drop_included_sources(sources) == [tmp_path / "d.cu", tmp_path / "a.cu"]
    (tmp_path / "c.cu").write_text('#include "a.cu"\n')  # a cycle: the first listed stays
    assert drop_included_sources(sources) == [tmp_path / "d.cu", tmp_path / "c.cu"]


def test_a_common_header_with_cublaslt_cudnn_nccl_cufft_nvtx_compiles_and_runs(built):
    result = _run(built, "uses_none")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "PASS\n"


def test_an_unemulated_call_stops_the_program_naming_it(built):
    result = _run(built, "calls_cudnn")
    assert result.returncode == 87
    assert result.stdout == "before\n"
    assert "musify-emu: cudnnCreate (cudnn) is not emulated" in result.stderr


def test_the_musa_face_declares_the_musa_spellings(built):
    result = _run(built, "port_calls_mccl")
    assert result.returncode == 87, result.stdout + result.stderr
    assert "musify-emu: mcclGetUniqueId (nccl) is not emulated" in result.stderr


def test_lockstep_transpose_is_silently_wrong_without_the_race_check(built):
    result = _run(built, "transpose")
    assert result.returncode == 1
    assert "FAIL" in result.stdout
    assert _run(built, "transpose", "sync").stdout.endswith("PASS\n")


def test_race_check_reports_the_write_and_the_read_with_their_lines(built):
    result = _run(built, "transpose_race")
    assert result.returncode == 86
    source = str(PROGRAMS / "transpose8x8.cu")
    first = result.stderr.splitlines()[0]
    assert first.startswith("musify-emu: shared-memory race: ")
    assert f"write at {source}:15 by thread (1,0,0)" in first
    assert f"read at {source}:16 by thread (0,0,0)" in first
    assert "block (0,0,0)" in first
    assert "PASS" not in result.stdout and "FAIL" not in result.stdout  # stopped at the race


def test_race_check_accepts_barriers_warp_syncs_and_atomics(built):
    assert _run(built, "transpose_race", "sync").stdout.endswith("PASS\n")
    result = _run(built, "racecheck")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "PASS\n"


def test_race_check_covers_dynamic_shared_memory(built):
    result = _run(built, "racecheck", "dynamic")
    assert result.returncode == 86
    assert "racecheck.cu:38" in result.stderr and "racecheck.cu:39" in result.stderr
    assert "no race reported" not in result.stdout
