"""Layout checks for `corpora/`: every program directory is complete and self-describing.

The emulator, the golden-port tests and `musify verify` all read `program.toml`; a missing source
or a misspelt key would otherwise surface much later as a confusing build failure. These checks
are static and fast (no compiler). `load_programs` is also used by `test_corpora_nvcc.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

CORPORA = Path(__file__).resolve().parents[1] / "corpora"

REQUIRED_KEYS = {"description", "sources", "libraries", "warp128", "args", "exit_code"}
OPTIONAL_KEYS = {"migrate_only"}
# "cuda" is the driver library (-lcuda) for the driver-API program.
KNOWN_LIBRARIES = {"cublas", "curand", "cuda"}
SOURCE_SUFFIXES = {".cu", ".cpp"}
SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
MIN_RUNNABLE = 28


@dataclass(frozen=True)
class Program:
    """One corpus program as its `program.toml` describes it."""

    name: str
    directory: Path
    description: str
    sources: tuple[str, ...]
    libraries: tuple[str, ...]
    warp128: str
    args: tuple[str, ...]
    exit_code: int
    migrate_only: bool


def program_dirs() -> list[Path]:
    """Every directory directly under corpora/ except hidden ones."""
    return sorted(p for p in CORPORA.iterdir() if p.is_dir() and not p.name.startswith("."))


def load_program(directory: Path) -> tuple[Program, dict]:
    """Parse one program.toml; returns the program and the raw table (for key checks)."""
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    raw = tomllib.loads((directory / "program.toml").read_text(encoding="utf-8"))
    program = Program(
        name=directory.name,
        directory=directory,
        description=raw.get("description", ""),
        sources=tuple(raw.get("sources", ())),
        libraries=tuple(raw.get("libraries", ())),
        warp128=raw.get("warp128", ""),
        args=tuple(raw.get("args", ())),
        exit_code=raw.get("exit_code", -1),
        migrate_only=raw.get("migrate_only", False),
    )
    return program, raw


def load_programs() -> list[Program]:
    return [load_program(d)[0] for d in program_dirs()]


def _ids(dirs: list[Path]) -> list[str]:
    return [d.name for d in dirs]


@pytest.mark.parametrize("directory", program_dirs(), ids=_ids(program_dirs()))
def test_program_toml_is_valid(directory: Path) -> None:
    assert SNAKE_CASE.match(directory.name), f"{directory.name}: directory names are snake_case"
    assert (directory / "program.toml").is_file(), f"{directory.name}: no program.toml"
    program, raw = load_program(directory)
    unknown = set(raw) - REQUIRED_KEYS - OPTIONAL_KEYS
    assert not unknown, f"{program.name}: unknown keys {sorted(unknown)}"
    missing = REQUIRED_KEYS - set(raw)
    assert not missing, f"{program.name}: missing keys {sorted(missing)}"
    assert isinstance(program.description, str) and program.description.strip()
    assert "\n" not in program.description, "description is one line"
    assert program.sources, f"{program.name}: no sources"
    assert all(isinstance(a, str) for a in program.args)
    assert isinstance(raw["exit_code"], int)
    assert isinstance(program.migrate_only, bool)
    assert program.warp128 in {"pass", "fail"}
    assert set(program.libraries) <= KNOWN_LIBRARIES, f"{program.name}: {program.libraries}"
    for source in program.sources:
        path = directory / source
        assert path.is_file(), f"{program.name}: source {source} does not exist"
        assert path.suffix in SOURCE_SUFFIXES, f"{program.name}: {source} is not .cu or .cpp"


@pytest.mark.parametrize("directory", program_dirs(), ids=_ids(program_dirs()))
def test_program_is_self_contained(directory: Path) -> None:
    """Quoted includes resolve inside the program's own directory, so it can be ported alone."""
    for path in sorted(directory.iterdir()):
        if path.suffix not in {".cu", ".cpp", ".cuh", ".h"}:
            continue
        for header in QUOTED_INCLUDE.findall(path.read_text(encoding="utf-8")):
            assert (directory / header).is_file(), f"{path.name} includes missing \"{header}\""


@pytest.mark.parametrize("directory", program_dirs(), ids=_ids(program_dirs()))
def test_runnable_program_reports_pass_and_fail(directory: Path) -> None:
    program, _ = load_program(directory)
    if program.migrate_only:
        return
    text = "\n".join((directory / s).read_text(encoding="utf-8") for s in program.sources)
    assert "PASS" in text and "FAIL" in text, f"{program.name}: no PASS/FAIL report in its sources"
    assert re.search(r"\bint\s+main\s*\(", text), f"{program.name}: no main()"


def test_enough_runnable_programs() -> None:
    runnable = [p for p in load_programs() if not p.migrate_only]
    assert len(runnable) >= MIN_RUNNABLE, [p.name for p in runnable]


def test_exactly_one_program_needs_32_lane_warps() -> None:
    failing = [p.name for p in load_programs() if p.warp128 == "fail"]
    assert failing == ["warp32_only"]


def _marked_lines(program: str) -> list[int]:
    text = (CORPORA / program / f"{program}.cu").read_text(encoding="utf-8")
    return [n for n, line in enumerate(text.splitlines(), 1) if re.search(r"//\s*WARP32\s*$", line)]


def test_warp32_markers() -> None:
    """warp32_only marks its 32-lane assumptions; warp_agnostic has none and no 0xffffffff mask."""
    assert len(_marked_lines("warp32_only")) >= 6
    assert _marked_lines("warp_agnostic") == []
    agnostic = (CORPORA / "warp_agnostic" / "warp_agnostic.cu").read_text(encoding="utf-8")
    assert "0xffffffff" not in agnostic and "& 31" not in agnostic and ">> 5" not in agnostic


def test_migrate_only_programs_are_not_run() -> None:
    tours = [p for p in load_programs() if p.migrate_only]
    assert [p.name for p in tours] == ["library_tour"]


def test_exclude_file_keeps_expected_ports_out() -> None:
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    config = tomllib.loads((CORPORA / ".musify.toml").read_text(encoding="utf-8"))
    assert "*/expected/*" in config["exclude"] and "*/expected" in config["exclude"]


def test_readme_lists_every_program() -> None:
    readme = (CORPORA / "README.md").read_text(encoding="utf-8")
    missing = [d.name for d in program_dirs() if f"`{d.name}`" not in readme]
    assert not missing, f"corpora/README.md does not list {missing}"
