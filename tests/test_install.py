"""A built wheel works on its own: installed into a fresh venv, run from another directory.

This is what a user who runs `pip install musify` gets: no checkout on the path, the rules, shims
and docs read from the package, the compiled rules shipped so nothing is compiled on first use.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "corpora" / "constant_memory"
SOURCES = ("musify", "rules", "shims", "docs", "setup.py", "pyproject.toml", "MANIFEST.in", "README.md")


def _copy_source(dst: Path) -> None:
    """The repository's build inputs only, so the build never writes into the checkout."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "data", "coverage")
    for name in SOURCES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dst / name, ignore=ignore)
        else:
            shutil.copy2(src, dst / name)


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    pytest.importorskip("wheel", reason="building a wheel offline needs the 'wheel' package")
    root = tmp_path_factory.mktemp("install")
    src, dist, env = root / "src", root / "dist", root / "venv"
    src.mkdir()
    _copy_source(src)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(dist), str(src)], check=True, cwd=root, timeout=600)
    wheels = list(dist.glob("musify-*.whl"))
    assert len(wheels) == 1
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(env)],
                   check=True, timeout=300)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install",
                    "--no-deps", "--no-build-isolation", "-q", str(wheels[0])], check=True, timeout=600)
    return env


def _run(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MUSIFY_RULES_DIR")}
    env["MUSIFY_CACHE_DIR"] = str(cwd / "cache")
    return subprocess.run([str(venv / "bin" / "musify"), *args], check=False, cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_wheel_migrates_and_emu_runs_from_another_directory(venv: Path, tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    shutil.copytree(PROGRAM, work / "prog", ignore=shutil.ignore_patterns("expected"))
    found = subprocess.run([str(venv / "bin" / "python"), "-c", "import musify; print(musify.__file__)"],
                           cwd=work, capture_output=True, text=True, check=True).stdout
    assert str(venv) in found and str(REPO) not in found  # the installed copy, not the checkout

    done = _run(venv, work, "migrate", "prog", "-o", "out", "--json", "run.json")
    assert done.returncode == 0, done.stderr
    for expected in (PROGRAM / "expected").iterdir():
        assert (work / "out" / expected.name).read_bytes() == expected.read_bytes(), expected.name
    assert "compiling the rule database" not in done.stderr  # the wheel ships the compiled rules
    assert not (work / "cache" / "rules").exists()

    ran = _run(venv, work, "emu-run", "out/constant_memory.mu")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "PASS" in ran.stdout
    assert (work / "cache" / "emu").is_dir()  # under the one cache root


def test_explain_and_report_read_the_packaged_docs(venv: Path, tmp_path: Path) -> None:
    shown = _run(venv, tmp_path, "explain", "MU2020")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("# MU2020")  # the page itself, not the catalogue's one-line fallback
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(unsigned *m) { *m = __ballot_sync(0xffffffff, 1); }\n")
    done = _run(venv, tmp_path, "migrate", "k.cu", "--diff", "--report", "report.html")
    assert done.returncode in (0, 1), done.stderr
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "MU20" in html and str(REPO) not in html
