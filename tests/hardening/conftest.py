"""Helpers for the hardening tests: run the CLI in a subprocess (exit codes, stderr lines)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str) -> Result:
    """The `musify` command in this process (click's runner: exit code, stdout, stderr apart)."""
    from click.testing import CliRunner

    from musify.cli import main

    r = CliRunner().invoke(main, list(args))
    return Result(r.exit_code, r.stdout, r.stderr, r.exception)


def cli_process(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The `musify` command as a separate process (for tests that need a real one)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "musify", *args], check=False, capture_output=True,
                          text=True, timeout=timeout, env=env)


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    exception: BaseException | None = None


@pytest.fixture(scope="session")
def rules():
    from musify.options import Options
    from musify.rules.reverse import load_for

    return load_for(Options())
