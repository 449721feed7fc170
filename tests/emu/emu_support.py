"""Shared helpers for the emulator tests: build (cached) and run a program."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from musify.emu.build import BuildOptions, build
from musify.emu.run import RunResult, run

PROGRAMS = Path(__file__).resolve().parent / "programs"

requires_cxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


def build_and_run(sources: list[Path], options: BuildOptions | None = None, args: list[str] | None = None,
                  timeout: float = 120.0) -> RunResult:
    return run(build(sources, options or BuildOptions()).executable, args or [], timeout=timeout)
