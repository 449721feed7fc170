"""Every corpus program passes on the emulator's CUDA face, and its MUSA port on the MUSA face.

A port (corpora/<name>/expected/, sources renamed .cu -> .mu) must pass at warp 32 and at warp 128,
except programs marked `warp128 = "fail"`, which hard-code 32-lane warps and must not pass at 128.

The programs' speed does not matter here, so they are built at -O1; every selected build is made
up front on two worker threads (each test then only runs its program).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib
from emu_support import requires_cxx

from musify.emu.build import Build, BuildError, BuildOptions, build_many
from musify.emu.run import run

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
PROGRAMS = sorted(p.parent for p in CORPORA.glob("*/program.toml"))

pytestmark = requires_cxx


def _load(program: Path) -> dict:
    return tomllib.loads((program / "program.toml").read_text())


def _config(program: Path) -> dict:
    config = _load(program)
    if config.get("migrate_only"):
        pytest.skip(f"{program.name} is migrate_only")
    return config


def _port_sources(program: Path, config: dict) -> list[Path]:
    expected = program / "expected"
    return [expected / (Path(s).with_suffix(".mu") if Path(s).suffix == ".cu" else Path(s)) for s in config["sources"]]


def _job(program: Path, face: str, warp: int) -> tuple[list[Path], BuildOptions] | None:
    """What to build for one test, or None when the test will skip."""
    config = _load(program)
    if config.get("migrate_only"):
        return None
    sources = [program / s for s in config["sources"]] if face == "cuda" else _port_sources(program, config)
    if not all(s.is_file() for s in sources):
        return None
    return sources, BuildOptions(face=face, warp=warp, optimize=1)


@pytest.fixture(scope="module")
def corpus_builds(request) -> dict[tuple[str, str, int], Build | BuildError]:
    """Build every corpus program the session selected (two at a time), keyed by (name, face, warp)."""
    keys = []
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.module is request.module and "program" in params:
            face = "cuda" if item.originalname == "test_cuda_face_warp32" else "musa"
            keys.append((params["program"], face, params.get("warp", 32)))
    keys = [k for k in dict.fromkeys(keys) if _job(*k) is not None]
    results = build_many([_job(*k) for k in keys], workers=2)
    return {(program.name, face, warp): r for (program, face, warp), r in zip(keys, results)}


def _passes(built: Build | BuildError, config: dict) -> tuple[bool, str]:
    if isinstance(built, BuildError):
        return False, f"{built}\n{built.log[-4000:]}"
    result = run(built.executable, [str(a) for a in config.get("args", [])], timeout=120)
    ok = result.returncode == config.get("exit_code", 0) and "PASS" in result.stdout and not result.timed_out
    return ok, f"exit {result.returncode}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_cuda_face_warp32(program, corpus_builds):
    config = _config(program)
    ok, log = _passes(corpus_builds[(program.name, "cuda", 32)], config)
    assert ok, log


@pytest.mark.parametrize("warp", [32, 128])
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_musa_port(program, warp, corpus_builds):
    config = _config(program)
    sources = _port_sources(program, config)
    missing = [s for s in sources if not s.is_file()]
    if missing:
        pytest.skip(f"{program.name}: port source {missing[0].name} missing from expected/")
    ok, log = _passes(corpus_builds[(program.name, "musa", warp)], config)
    if warp == 128 and config.get("warp128") == "fail":
        assert not ok, f"{program.name} hard-codes 32-lane warps and should fail at warp 128\n{log}"
    else:
        assert ok, log
