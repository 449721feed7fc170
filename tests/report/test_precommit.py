"""The pre-commit hooks, end to end with the real `pre-commit`: `try-repo` installs this repository
into pre-commit's own environment and runs `musify-check` and `musify-migrate` on a throw-away git
repository holding one clean MUSA file and one CUDA-only file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLEAN = "#include <musa_runtime.h>\nint main() { void *p; musaMalloc(&p, 4); musaFree(p); return 0; }\n"
CUDA = "#include <cuda_runtime.h>\nint main() { void *p; cudaMalloc(&p, 4); cudaFree(p); return 0; }\n"


def _pre_commit() -> list[str]:
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout of musify")
    return [sys.executable, "-m", "pre_commit"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def test_hooks_with_the_real_pre_commit(tmp_path):
    pre_commit = _pre_commit()
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q")
    _git(work, "config", "user.email", "t@example.com")
    _git(work, "config", "user.name", "t")
    (work / "clean.mu").write_text(CLEAN)
    (work / "kernel.cu").write_text(CUDA)
    _git(work, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "MUSIFY_CACHE_DIR": os.environ.get("MUSIFY_CACHE_DIR", str(tmp_path / "cache")),
           # until the rule database ships inside the package, point the installed hook at it
           "MUSIFY_RULES_DIR": str(REPO / "rules"), "PIP_NO_INPUT": "1", "PYTHONPATH": ""}

    def hook(hook_id: str) -> subprocess.CompletedProcess:
        return subprocess.run([*pre_commit, "try-repo", str(REPO), hook_id, "--all-files", "--color", "never"],
                              cwd=work, env=env, capture_output=True, text=True, timeout=420)

    check = hook("musify-check")
    out = check.stdout + check.stderr
    assert check.returncode == 1, out
    assert "kernel.cu: would be migrated" in out and "clean.mu" not in out.split("Failed", 1)[-1]
    migrate = hook("musify-migrate")  # a fixer fails the run that changed files, as pre-commit expects
    assert migrate.returncode == 1, migrate.stdout + migrate.stderr
    assert not (work / "kernel.cu").exists() and "musaMalloc" in (work / "kernel.mu").read_text()
    assert (work / "clean.mu").read_text() == CLEAN
    _git(work, "add", "-A")
    again = hook("musify-check")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Passed" in again.stdout
