"""Fast checks of verify's parts: flag sorting, build descriptions (make -n, compile databases,
CMake), output comparison, configuration errors, verdict reasons."""

from __future__ import annotations

import json
import shutil

import pytest
from verify_support import PROJECTS

from musify.config import ConfigError
from musify.emu.command import split_build_flags
from musify.emu.flags import parse_flags
from musify.sandbox import Outcome
from musify.verify.buildinfo import from_cmake, from_compile_commands, read_build
from musify.verify.compare import Comparer, Run
from musify.verify.engine import RACE_MARK, _failure, _races
from musify.verify.settings import DEFAULT_IGNORE, from_table


def test_flags_are_honoured_or_listed_with_the_reason():
    line = ("-I../common -DUSE_X=1 -UOLD -O3 -arch=sm_80 -Xcompiler -fopenmp,-Wall -std=c++14 -c -o a.o "
            "-lcudart -lm --use_fast_math -gencode arch=compute_80,code=sm_80 -isystem /opt/x --std=c++20 -MD -MF a.d")
    words = line.split(" ")
    flags = parse_flags(words, "/proj/app")
    assert flags.flags == ["-I/proj/common", "-DUSE_X=1", "-UOLD", "-fopenmp", "-Wall", "-lm", "-I/opt/x", "-std=c++20"]
    ignored = dict(flags.ignored)
    assert set(ignored) == {"-O3", "-arch=sm_80", "-std=c++14", "--use_fast_math", "-gencode arch=compute_80,code=sm_80"}
    assert "C++17" in ignored["-std=c++14"] and "device-code" in ignored["-arch=sm_80"]


def test_emu_run_takes_compiler_flags_before_the_program_arguments():
    flags, rest = split_build_flags(["-I", "inc", "-DX=2", "a.cu", "-std=c++17", "--warp", "128", "-fopenmp",
                                     "-Xcompiler", "-O0"])
    assert flags == ["-I", "inc", "-DX=2", "-std=c++17", "-fopenmp", "-Xcompiler", "-O0"]
    assert rest == ["a.cu", "--warp", "128"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_makefile_compiler_lines_are_read_without_running_them(tmp_path):
    app = tmp_path / "app"
    shutil.copytree(PROJECTS / "make_omp", tmp_path, dirs_exist_ok=True)
    info = read_build(app)
    assert info.where.endswith("Makefile (make -n)") and not info.problem
    assert info.sources == [(app / "main.cu").resolve()]
    assert {"-DSCALE=3", "-fopenmp", f"-I{tmp_path / 'common'}"} <= set(info.flags.flags)
    assert not (app / "app").exists()  # make -n built nothing


def test_compile_database_relative_and_absolute_directories(tmp_path):
    shutil.copytree(PROJECTS / "compdb", tmp_path, dirs_exist_ok=True)
    info = read_build(tmp_path / "src", root=tmp_path)
    assert info.sources == [(tmp_path / "src" / "main.cu").resolve()]
    assert f"-I{tmp_path / 'include'}" in info.flags.flags and "-DMODE=2" in info.flags.flags
    db = tmp_path / "build" / "compile_commands.json"
    db.parent.mkdir()
    db.write_text(json.dumps([{"directory": str(tmp_path), "file": "src/main.cu",
                               "command": "nvcc -Iinclude -DMODE=5 -c src/main.cu"}]))
    again = from_compile_commands(db, tmp_path / "src")
    assert "-DMODE=5" in again.flags.flags
    db.write_text("{not json")
    assert "not a readable compile database" in from_compile_commands(db, tmp_path / "src").problem


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_cmake_is_configured_into_a_temporary_folder(tmp_path):
    (tmp_path / "main.cpp").write_text("int main() { return VALUE - 7; }\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(t LANGUAGES CXX)\nadd_executable(t main.cpp)\n"
        "target_compile_definitions(t PRIVATE VALUE=7)\ntarget_include_directories(t PRIVATE inc)\n")
    info = from_cmake(tmp_path, 120)
    assert not info.problem, info.problem
    assert "-DVALUE=7" in info.flags.flags and f"-I{tmp_path / 'inc'}" in info.flags.flags
    assert not (tmp_path / "CMakeCache.txt").exists()


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("nvcc") is None,
                    reason="needs cmake, and nvcc for FindCUDA to configure")
def test_findcuda_projects_give_their_flags_from_the_generated_scripts(tmp_path):
    """`cuda_add_executable` compiles through a generated CMake script, not a compile database
    entry: the flags come from that script, and the toolkit's own include folder is not honoured."""
    (tmp_path / "k.cu").write_text("int main() { return SCALE - 3; }\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(t CXX)\nfind_package(CUDA REQUIRED)\n"
        "list(APPEND CUDA_NVCC_FLAGS -O3 -DSCALE=3)\ninclude_directories(${CUDA_INCLUDE_DIRS} inc)\n"
        "cuda_add_executable(t k.cu)\n")
    info = from_cmake(tmp_path, 120)
    assert not info.problem, info.problem
    assert info.sources == [(tmp_path / "k.cu").resolve()]
    assert "-DSCALE=3" in info.flags.flags and f"-I{tmp_path / 'inc'}" in info.flags.flags
    reasons = dict(info.flags.ignored)
    assert "-O3" in reasons and any("toolkit" in why for why in reasons.values())


def test_comparison_tolerates_close_numbers_and_ignores_timing_lines():
    c = Comparer(1e-5, 1e-8, DEFAULT_IGNORE)
    a = Run(0, "info: Average kernel execution time 9.67 (s)\nsum 1.0000001\nBandwidth 12 GB/s\n", "", {})
    b = Run(0, "info: Average kernel execution time 1.02 (s)\nsum 1.0000002\nBandwidth 99 GB/s\n", "", {})
    assert c.first_difference(a, b) is None
    far = Run(0, "sum 1.1\n", "", {})
    diff = c.first_difference(a, far)
    assert diff.where == "stdout line 1" and diff.original == "sum 1.0000001" and "-sum 1.0000001" in diff.diff
    assert c.first_difference(Run(0, "", "error: cudaErrorInvalidValue\n", {}),
                              Run(0, "", "error: musaErrorInvalidValue\n", {})) is None
    assert c.first_difference(Run(0, "", "", {}), Run(1, "", "", {})).where == "exit status"
    assert c.first_difference(Run(0, "PASS\n", "", {}), Run(1, "FAIL\n", "", {})).where == "stdout line 1"
    assert c.first_difference(Run(0, "", "", {"o.bin": b"\x00\xff"}), Run(0, "", "", {"o.bin": b"\x00\xfe"})).where \
        == "file o.bin byte 1"
    assert c.first_difference(Run(0, "", "", {"o.txt": b"x"}), Run(0, "", "", {})).port == "not written"


def test_configuration_errors_name_the_file_and_key():
    with pytest.raises(ConfigError, match="p.toml: verify: unknown key 'time_limt'"):
        from_table({"time_limt": 3}, "p.toml", ".")
    with pytest.raises(ConfigError, match=r"verify.programs\[0\].args has the wrong type"):
        from_table({"programs": [{"name": "a", "args": "x"}]}, "p.toml", ".")
    with pytest.raises(ConfigError, match="bad pattern"):
        from_table({"ignore": ["("]}, "p.toml", ".")
    s = from_table({"programs": [{"name": "a", "args": [["1"], ["2", "3"]]}, {"name": "b", "args": ["4"]}],
                    "memory_limit_gib": 0}, "p.toml", ".")
    assert s.programs[0].args == (("1",), ("2", "3")) and s.programs[1].args == (("4",),)
    assert s.memory_limit is None


def test_a_race_report_becomes_the_original_fails_reason():
    stderr = f"{RACE_MARK} read at dct.cu:88 of a write at dct.cu:80 (block 0, threads 1 and 0)\n"
    outcome = Outcome(86, "", stderr, "exited", 0.1, "namespaces")
    assert _failure(outcome, None) == "shared-memory race"
    assert _races(stderr) == ["read at dct.cu:88 of a write at dct.cu:80 (block 0, threads 1 and 0)"]


def test_emu_run_reads_flags_from_a_compile_database(tmp_path):
    import click

    from musify.emu.command import _database_flags

    shutil.copytree(PROJECTS / "compdb", tmp_path, dirs_exist_ok=True)
    flags = _database_flags(tmp_path, (tmp_path / "src" / "main.cu",), parse_flags(["-DEXTRA=1"]))
    assert "-DMODE=2" in flags.flags and "-DEXTRA=1" in flags.flags and f"-I{tmp_path / 'include'}" in flags.flags
    with pytest.raises(click.UsageError, match="no entry compiles"):
        _database_flags(tmp_path, (tmp_path / "include" / "modes.cuh",), parse_flags([]))
    with pytest.raises(click.UsageError, match="no compile_commands.json there"):
        _database_flags(tmp_path / "src", (tmp_path / "src" / "main.cu",), parse_flags([]))


def test_compiler_errors_land_beside_the_migration_diagnostics_at_their_line(tmp_path):
    from musify import diagnostics
    from musify.records import FileResult, RunRecord
    from musify.verify import hazards

    src = tmp_path / "app.cu"
    src.write_text("int main() {\n  cudaMemAdvise(p, n, a, 0);\n}\n")
    port = tmp_path / "port" / "app.mu"
    f = FileResult(path=str(src), output_path="app.mu", kind="cuda-source", status="migrated")
    f.diagnostics.append(diagnostics.make("MU1002", str(src), 2, 3, name="cudaMemAdvise", library="cudart"))
    record = RunRecord("t", "musify migrate", [str(tmp_path)], str(tmp_path / "port"), {}, "x", files=[f])
    result = {"sources": [str(src)], "archs": {"mp_22": {"verdict": "build-fail-port", "reason": "x", "errors": [
        {"path": str(port), "line": 2, "column": 3, "message": "'cudaMemAdvise' was not declared in this scope"}]}}}
    hazards.apply(record, [result], {port.resolve(): src.resolve()})
    err = result["archs"]["mp_22"]["errors"][0]
    assert len(err["migration"]) == 1 and "MU1002" in err["migration"][0]
    added = [d for d in f.diagnostics if d.id == "MU5001"]
    assert len(added) == 1 and added[0].line == 2 and "not declared" in added[0].message
