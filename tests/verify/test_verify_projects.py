"""Projects verify with no flags typed by hand: a Makefile with -I../common, a -D switch and
OpenMP (read with make -n), and a compile_commands.json; through the command line, with the
record written (JSON) and rendered on the console."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from verify_support import PROJECTS, requires_cxx

pytestmark = [requires_cxx, pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")]
REPO = Path(__file__).resolve().parents[2]


def test_makefile_and_compile_database_projects_verify_without_flags(tmp_path):
    original = tmp_path / "projects"
    shutil.copytree(PROJECTS, original)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    run = [sys.executable, "-m", "musify"]
    migrated = subprocess.run([*run, "migrate", str(original), "-o", str(tmp_path / "port"), "-q", "--verify",
                               "--verify-arch", "mp_31", "-j", "2", "--json", str(tmp_path / "run.json")],
                              check=False, capture_output=True, text=True, env=env, timeout=900)
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    doc = json.loads((tmp_path / "run.json").read_text())
    programs = {p["name"]: p for p in doc["verify"]["programs"]}
    make_omp = programs["make_omp/app"]
    assert make_omp["archs"]["mp_31"]["verdict"] == "pass"
    assert make_omp["flags"]["from"].endswith("Makefile (make -n)")
    assert {"-DSCALE=3", "-fopenmp", f"-I{original / 'make_omp' / 'common'}"} <= set(make_omp["flags"]["honoured"])
    assert ["-arch=sm_80", "an nvcc device-code option; the emulator compiles device code with g++"] in \
        make_omp["flags"]["not_honoured"]
    compdb = programs["compdb/src"]
    assert compdb["archs"]["mp_31"]["verdict"] == "pass"
    assert compdb["flags"]["from"].endswith("compile_commands.json")
    assert "-DMODE=2" in compdb["flags"]["honoured"]
    assert "make_omp/app" in migrated.stderr and "flag '-O2'" in migrated.stderr  # the console table and notes

    # without the project's -D the same sources do not build: the flags did the work
    from musify.emu.build import BuildError, BuildOptions, build

    with pytest.raises(BuildError) as failed:
        build([original / "compdb" / "src" / "main.cu"],
              BuildOptions(face="cuda", arch="sm_80", optimize=1, project_flags=(f"-I{original / 'compdb' / 'include'}",)))
    assert "build with -DMODE" in failed.value.log
