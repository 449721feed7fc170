"""Every corpus program is real CUDA: each source compiles with `nvcc -c` (no GPU needed).

Skipped when nvcc is not on PATH. Library headers that the toolkit does not ship (cuBLAS and
cuRAND come as separate packages, e.g. the nvidia-cublas-cu12 / nvidia-curand-cu12 wheels) are
looked up in the colon-separated directories of $MUSIFY_CUDA_EXTRA_INCLUDE; a program needing
one that is found nowhere is skipped with the header's name.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_corpora_layout import Program, load_programs

NVCC = shutil.which("nvcc")
ANGLE_INCLUDE = re.compile(r"^\s*#\s*include\s*<([^>]+)>", re.MULTILINE)
# Headers of CUDA libraries that are installed separately from the compiler.
LIBRARY_HEADER = re.compile(r"^(cublas|curand|cufft|cusparse|cusolver|nccl|cudnn|npp)")


def _extra_include_dirs() -> list[Path]:
    raw = os.environ.get("MUSIFY_CUDA_EXTRA_INCLUDE", "")
    return [Path(p) for p in raw.split(os.pathsep) if p]


def _toolkit_include_dirs() -> list[Path]:
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    return [Path(r) / "include" for r in roots if r]


def _library_headers(program: Program) -> set[str]:
    headers: set[str] = set()
    for source in program.sources:
        text = (program.directory / source).read_text(encoding="utf-8")
        headers.update(h for h in ANGLE_INCLUDE.findall(text) if LIBRARY_HEADER.match(h))
    return headers


def _include_flags(program: Program) -> list[str]:
    """-I flags for the program's library headers; skips the test when one cannot be found."""
    flags: list[str] = []
    for header in sorted(_library_headers(program)):
        if any((d / header).is_file() for d in _toolkit_include_dirs()):
            continue
        found = [d for d in _extra_include_dirs() if (d / header).is_file()]
        if not found:
            pytest.skip(f"{program.name}: <{header}> is not installed; point MUSIFY_CUDA_EXTRA_INCLUDE at it")
        flags.append(f"-I{found[0]}")
    return list(dict.fromkeys(flags))


RUNNABLE = [p for p in load_programs() if not p.migrate_only]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("program", RUNNABLE, ids=[p.name for p in RUNNABLE])
def test_program_compiles_with_nvcc(program: Program, tmp_path: Path) -> None:
    flags = _include_flags(program)
    for source in program.sources:
        result = subprocess.run(
            [NVCC, "-std=c++17", *flags, "-c", source, "-o", str(tmp_path / (Path(source).stem + ".o"))],
            cwd=program.directory,
            check=False,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, f"{program.name}/{source} does not compile:\n{result.stderr[-4000:]}"
