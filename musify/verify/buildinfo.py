"""Read how a project builds a program, so that verify compiles it the same way with no flags
typed by hand: from a `compile_commands.json` (`-p BUILD_DIR`, or one in the program's folder or
its `build/`), from a Makefile (`make -n -B`, which prints the compiler lines and runs none of
them), or from CMake (configured into a temporary folder to get a compile database).

The result is the flags (sorted by musify/emu/flags.py into honoured and not) and, when the
build names them, the sources it compiles: a source that another one `#include`s is then not
compiled on its own.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from musify.emu.flags import FlagSet, parse_flags
from musify.sandbox import run_tool

SOURCE_SUFFIXES = {".cu", ".cpp", ".cc", ".cxx", ".c++", ".C", ".mu"}
_COMPILERS = ("nvcc", "g++", "gcc", "c++", "cc", "clang++", "clang", "mpicxx", "mpic++", "hipcc", "mcc")


@dataclass
class BuildInfo:
    where: str = ""  # "compile_commands.json at ...", "Makefile (make -n)", "CMake", "" when none
    flags: FlagSet = field(default_factory=FlagSet)
    sources: list[Path] = field(default_factory=list)  # absolute; empty: not known from the build
    problem: str = ""  # why the build could not be read, when it could not


def read_build(directory: Path, build_dir: Path | None = None, time_limit: float = 120.0,
               root: Path | None = None) -> BuildInfo:
    """How the program in `directory` is built, from the first description found: a compile
    database in `build_dir`, or in `directory`, a folder above it up to `root`, or their `build/`."""
    above = [directory, *[p for p in directory.parents if root and (p == root or root in p.parents)]]
    candidates = [build_dir] if build_dir else [c for d in above for c in (d, d / "build")]
    for d in candidates:
        db = Path(d) / "compile_commands.json"
        if db.is_file():
            return from_compile_commands(db, directory)
    for name in ("GNUmakefile", "makefile", "Makefile"):
        if (directory / name).is_file():
            return from_makefile(directory, time_limit)
    if (directory / "CMakeLists.txt").is_file():
        return from_cmake(directory, time_limit)
    return BuildInfo()


def from_compile_commands(db: Path, directory: Path) -> BuildInfo:
    """The entries of a compile database for sources in (or compiled from) `directory`."""
    info = BuildInfo(where=f"{db}")
    try:
        entries = json.loads(db.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        info.problem = f"{db}: not a readable compile database: {exc}"
        return info
    base = directory.resolve()
    for entry in entries if isinstance(entries, list) else []:
        run_in = db.parent / entry.get("directory", ".")  # an absolute directory stays itself
        source = (run_in / entry.get("file", "")).resolve()
        if source.parent != base and base not in source.parents:
            continue
        words = entry.get("arguments") or shlex.split(entry.get("command", ""))
        _add_command(info, words, run_in)
    return info


def from_makefile(directory: Path, time_limit: float) -> BuildInfo:
    """The compiler lines `make -n -B` prints for the default target, run in `directory`."""
    info = BuildInfo(where=f"{directory / 'Makefile'} (make -n)")
    make = shutil.which("make")
    if make is None:
        info.problem = "make is not installed"
        return info
    out = run_tool([make, "-n", "-B", "--no-print-directory"], cwd=directory, time_limit=time_limit)
    if out.returncode != 0:
        info.problem = f"make -n failed: {(out.stderr.strip().splitlines() or [out.reason()])[-1]}"
        return info
    for line in out.stdout.splitlines():
        for part in line.replace("&&", ";").split(";"):
            try:
                words = shlex.split(part)
            except ValueError:
                continue
            if words and os.path.basename(words[0]) in _COMPILERS:
                _add_command(info, words, directory)
    return info


def from_cmake(directory: Path, time_limit: float) -> BuildInfo:
    """Configure the CMake project into a temporary folder and read the compile database it writes."""
    info = BuildInfo(where=f"{directory / 'CMakeLists.txt'} (cmake)")
    cmake = shutil.which("cmake")
    if cmake is None:
        info.problem = "cmake is not installed"
        return info
    with tempfile.TemporaryDirectory(prefix="musify-cmake-") as tmp:
        out = run_tool([cmake, "-S", str(directory), "-B", tmp, "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                       cwd=Path(tmp), time_limit=time_limit)
        db = Path(tmp) / "compile_commands.json"
        if out.returncode != 0:
            info.problem = f"cmake could not configure the project: {(out.stderr.strip().splitlines() or [out.reason()])[-1]}"
            return info
        found = from_compile_commands(db, directory) if db.is_file() else BuildInfo()
        _findcuda_commands(Path(tmp), found)
    found.where = info.where
    return found


_CMAKE_SET = re.compile(r"^set\((\w+) (.*?)\)(?: #.*)?$", re.MULTILINE)


def _findcuda_commands(build: Path, info: BuildInfo) -> None:
    """FindCUDA's `cuda_add_executable` compiles each .cu through a generated CMake script, which
    the compile database does not list: read the nvcc flags, include folders and definitions
    from those scripts (`CMakeFiles/<target>.dir/<target>_generated_<source>.o.cmake`)."""
    for script in sorted(build.glob("CMakeFiles/*.dir/**/*_generated_*.o.cmake")):
        values = {m.group(1): m.group(2) for m in _CMAKE_SET.finditer(script.read_text(encoding="utf-8", errors="replace"))}
        source = values.get("source_file", "").strip('"')
        if not source:
            continue
        words = ["nvcc", *_cmake_list(values.get("CUDA_NVCC_FLAGS", "")), *_cmake_list(values.get("nvcc_flags", ""))]
        words += ["-I" + d for d in _cmake_list(values.get("CUDA_NVCC_INCLUDE_DIRS", ""))]
        words += ["-D" + d for d in _cmake_list(values.get("CUDA_NVCC_COMPILE_DEFINITIONS", ""))]
        words += shlex.split(values.get("CMAKE_HOST_FLAGS", ""))
        _add_command(info, [*words, source], build)


def _cmake_list(value: str) -> list[str]:
    """A CMake list as the generated script writes it: `a;b ;; ` or `[==[a;b]==]`."""
    value = value.strip()
    if value.startswith("[==[") and value.endswith("]==]"):
        value = value[4:-4]
    return [w.strip() for w in value.split(";") if w.strip()]


def _add_command(info: BuildInfo, words: list[str], run_in: Path) -> None:
    """One compiler line: its sources (existing files) and its flags."""
    flags, sources = [], []
    for i, word in enumerate(words[1:], 1):
        if not word.startswith("-") and Path(word).suffix in SOURCE_SUFFIXES and words[i - 1] not in ("-o", "-MF", "-MT"):
            path = (run_in / word).resolve()
            if path.is_file():
                sources.append(path)
                continue
        flags.append(word)
    for s in sources:
        if s not in info.sources:
            info.sources.append(s)
    info.flags.merge(parse_flags(flags, str(run_in)))
