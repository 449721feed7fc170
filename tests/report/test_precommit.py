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


def _can_build_here() -> bool:
    try:
        import setuptools
        import wheel  # noqa: F401
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 64


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
           "MUSIFY_RULES_DIR": str(REPO / "rules"), "PIP_NO_INPUT": "1", "PYTHONPATH": "",
           # the hook's venv sees the dependencies already installed here, so pip builds musify only
           "VIRTUALENV_SYSTEM_SITE_PACKAGES": "1"}
    if _can_build_here():
        env["PIP_NO_BUILD_ISOLATION"] = "1"  # and builds it with the setuptools already here

    def hooks() -> tuple[int, str]:
        """Both hooks of the manifest, in id order (check, then migrate), as a commit would run them."""
        r = subprocess.run([*pre_commit, "try-repo", str(REPO), "--all-files", "--color", "never"],
                           check=False, cwd=work, env=env, capture_output=True, text=True, timeout=420)
        return r.returncode, r.stdout + r.stderr

    rc, out = hooks()
    assert rc == 1, out
    check, migrate = out.split("- hook id: musify-check", 1)[1].split("- hook id: musify-migrate", 1)
    assert "kernel.cu: would be migrated" in check and "clean.mu" not in check
    assert "files were modified by this hook" in migrate  # a fixer fails the run that changed files
    assert not (work / "kernel.cu").exists() and "musaMalloc" in (work / "kernel.mu").read_text()
    assert (work / "clean.mu").read_text() == CLEAN
    _git(work, "add", "-A")
    rc, out = hooks()
    assert rc == 0, out
    assert "musify check (code that would change when ported to MUSA)" in out and "Passed" in out
