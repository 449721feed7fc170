"""Helpers for the hardening tests: run the CLI in a subprocess (exit codes, stderr lines)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "musify", *args], check=False, capture_output=True,
                          text=True, timeout=timeout, env=env, **kw)


@pytest.fixture(scope="session")
def rules():
    from musify.options import Options
    from musify.rules.reverse import load_for

    return load_for(Options())
