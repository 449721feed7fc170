"""The generated headers: current with the rules, and MUSA ports compile through musa_on_cuda with nvcc.

shims/emu/libs/ (the emulator's declarations-only library faces) and shims/musa_on_cuda/ (MUSA
names back to CUDA) are generated from rules/; a rule change that is not regenerated fails here.
A handful of corpus ports (warp collectives, half and bf16, cooperative groups, the driver API,
streams, a cuBLAS and a cuRAND program where nvcc's toolkit has those headers) are compiled with
`nvcc -c` in one batch: nvcc is slow, so the set is bounded rather than every port.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tools import gen_emu_libs, gen_musa_on_cuda

REPO = Path(__file__).resolve().parents[2]
SHIM = REPO / "shims" / "musa_on_cuda"
PORTS = ["warp_agnostic", "half_precision", "bf16_convert", "coop_groups", "driver_api", "streams_events",
         "cublas_gemm", "curand_device_pi"]
_ANGLE_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*<([^>\n]+)>', re.MULTILINE)


def _nvcc() -> Path | None:
    found = shutil.which("nvcc")
    if found:
        return Path(found)
    default = Path("/usr/local/cuda/bin/nvcc")
    return default if default.is_file() else None


def _toolkit_include(nvcc: Path) -> Path | None:
    """The toolkit's include folder (nvcc may be a wrapper script outside the toolkit)."""
    for root in (nvcc.resolve().parents[1], Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))):
        if (root / "include" / "cuda_runtime.h").is_file():
            return root / "include"
    return None


def test_library_faces_are_current():
    assert gen_emu_libs.main(["--check"]) == 0


def test_musa_on_cuda_is_current():
    assert gen_musa_on_cuda.main(["--check"]) == 0


def _cuda_header(musa_header: str) -> str | None:
    """The CUDA header a musa_on_cuda header includes (None: not one of ours)."""
    shim = SHIM / musa_header
    if not shim.is_file():
        return None
    return _ANGLE_INCLUDE.findall(shim.read_text())[0]


def _compilable(sources: list[Path], include: Path) -> bool:
    """Every library header the port includes maps to a CUDA header this toolkit has."""
    for source in sources:
        for name in _ANGLE_INCLUDE.findall(source.read_text()):
            cuda = _cuda_header(name)
            if cuda and not (include / cuda).is_file():
                return False
    return True


def test_corpus_ports_compile_with_nvcc_through_musa_on_cuda(tmp_path):
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    include = _toolkit_include(nvcc)
    if include is None:
        pytest.skip("nvcc's toolkit headers not found (set CUDA_HOME)")
    sources = []
    for name in PORTS:
        port = sorted((REPO / "corpora" / name / "expected").glob("*.mu")) + \
            sorted((REPO / "corpora" / name / "expected").glob("*.cpp"))
        if port and _compilable(port, include):
            sources += port
    assert len(sources) >= 5, "too few ports compilable with this toolkit to mean anything"
    cmd = [str(nvcc), "-x", "cu", "-c", "-arch=sm_80", "-I", str(SHIM), "-include", "musa_on_cuda.h",
           *map(str, sources), "-odir", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert sorted(p.stem for p in tmp_path.glob("*.o")) == sorted(s.stem for s in sources)


def test_a_port_that_keeps_a_cuda_only_spelling_is_not_hidden(tmp_path):
    """musa_on_cuda adds MUSA names; it must not make an unknown MUSA name compile."""
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    bad = tmp_path / "bad.mu"
    bad.write_text("#include <musa_runtime.h>\nint main() { void* p; return musaMallocNowhere(&p, 4); }\n")
    proc = subprocess.run([str(nvcc), "-x", "cu", "-c", "-I", str(SHIM), "-include", "musa_on_cuda.h", str(bad),
                           "-o", str(tmp_path / "bad.o")], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode != 0
    assert "musaMallocNowhere" in proc.stderr
