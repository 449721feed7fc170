"""Fuzzing every front end (issue 13, part 5): generated C/C++/CUDA-like text (real CUDA names
from the rules, comments, strings, raw strings, macros, unbalanced brackets, launches, random
bytes). For any input: no crash, no hang (each input has a time bound), the bytes outside the
edits are the input's, migrating the port changes nothing, -j1 equals -j2, and the emulator's
launch rewriter leaves a program without launches as it was.

A front end is one `FrontEnd` row: its file name and the text it is fed. The C family is covered
here; Python, CMake and Make front ends join by adding a row (their tokens) once they exist.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musify.discover import classify
from musify.emu.rewrite import rewrite
from musify.frontend.launches import find_launches
from musify.options import Options
from musify.rules.reverse import load_for
from musify.runner import migrate_text

RULES = load_for(Options())
_NAMES = sorted(RULES.names)
CUDA_NAMES = _NAMES[:: max(1, len(_NAMES) // 300)] + ["cudaMalloc", "cudaStream_t", "__global__", "threadIdx"]
PER_INPUT_S = 10.0  # generous: the machine running the suite may be busy; a hang is minutes, not seconds

C_TOKENS = [
    " ", " ", "\n", "\r\n", "\t", "\\\n", "(", ")", "[", "]", "{", "}", ";", ",", "<", ">", "::", "=", "*", "&",
    "//", "/*", "*/", '"', "'", "\\", "#", "#include <cuda_runtime.h>\n", '#include "k.cuh"\n', "#define M(x) ",
    "#if __CUDA_ARCH__ >= 800\n", "#endif\n", 'R"(', ')"', 'R"d(', ')d"', "u8\"", "L'", "<<<", ">>>",
    "k<<<1, 1>>>(p);", "ns::k<float, 2><<<g, b, 0, s>>>(x, y);", "__global__ void k(float *p) {}", "1'000",
    "0x1p-3", "\ufeff", "é", "\udcff", "\x00", "thrust::cuda", "extern __shared__ float s[];", "asm(\"mov\");",
]


@dataclass(frozen=True)
class FrontEnd:
    name: str
    path: str  # what the file is called: the runner picks the front end by it
    tokens: tuple[str, ...]


COMMON = [" ", "\n", "\r\n", "\t", "#", '"', "'", "\\", "(", ")", "[", "]", "{", "}", ",", "=", "$", "é", "\udcff", "\x00"]
PY_TOKENS = COMMON + ["import torch\n", "from torch.utils.cpp_extension import CUDAExtension\n", "torch.cuda.is_available()",
                      "x.cuda()", "device='cuda:0'", '"cuda"', '"""cuda in a docstring"""', "f'{x}cuda'", "    ",
                      "def f():\n", "torch.backends.cudnn.benchmark = True", "CUDA_HOME", "nvcc", "b'cuda'", "r'\\cuda'"]
CMAKE_TOKENS = COMMON + ["find_package(CUDA)", "find_package(CUDAToolkit REQUIRED)", "project(p LANGUAGES CXX CUDA)",
                         "${CUDA_LIBRARIES}", "CUDA::cudart", "cuda_add_library(k k.cu)", "[[", "]]", "#[[", "set(X ",
                         "enable_language(CUDA)", "CMAKE_CUDA_ARCHITECTURES", ";"]
MAKE_TOKENS = COMMON + ["NVCC = nvcc\n", "$(CUDA_HOME)", "-lcudart", "%.o: %.cu\n\t", "\\\n", "$(NVCC) -o $@ $<",
                        "ifeq ($(CUDA),1)\n", "endif\n", "-arch=sm_80", ":=", "include cuda.mk\n"]

# One row per front end; the Python and build-file front ends join as soon as musify classifies
# their files (until then those files are "other" and are copied, not migrated).
_CANDIDATES = [
    FrontEnd("cuda", "p.cu", tuple(C_TOKENS + CUDA_NAMES)),
    FrontEnd("cuda-header", "p.cuh", tuple(C_TOKENS + CUDA_NAMES)),
    FrontEnd("cpp", "p.cpp", tuple(C_TOKENS + CUDA_NAMES)),
    FrontEnd("python", "setup.py", tuple(PY_TOKENS)),
    FrontEnd("cmake", "CMakeLists.txt", tuple(CMAKE_TOKENS)),
    FrontEnd("make", "Makefile", tuple(MAKE_TOKENS)),
]
FRONT_ENDS = [fe for fe in _CANDIDATES if classify(fe.path) != "other"]


def texts(fe: FrontEnd):
    structured = st.lists(st.sampled_from(fe.tokens), max_size=80).map("".join)
    raw = st.binary(max_size=400).map(lambda b: b.decode("utf-8", "surrogateescape"))
    mixed = st.tuples(structured, raw, structured).map("".join)
    return st.one_of(structured, structured, raw, mixed)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


class _Hang(Exception):
    pass


def _bounded(fn, *args):
    """Run fn under a wall-clock bound (SIGALRM): a hang fails the example instead of the suite."""
    def on_alarm(*_):
        raise _Hang(f"no result within {PER_INPUT_S} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, PER_INPUT_S)
    try:
        return fn(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _migrate(fe: FrontEnd, text: str):
    return _bounded(migrate_text, text, fe.path, RULES, Options())


@pytest.mark.parametrize("fe", FRONT_ENDS, ids=lambda fe: fe.name)
def test_no_crash_bytes_kept_idempotent(fe):
    @SETTINGS
    @given(texts(fe))
    def prop(text):
        new, _, edits = _migrate(fe, text)
        rebuilt, pos = [], 0
        for e in edits:  # outside the edits, the output is the input
            assert e.start >= pos
            rebuilt.append(text[pos:e.start])
            rebuilt.append(e.replacement)
            pos = e.end
        rebuilt.append(text[pos:])
        assert "".join(rebuilt) == new
        again, _, more = _migrate(fe, new)
        assert again == new and more == [], "migrating the port changed it"

    prop()


@pytest.mark.parametrize("fe", FRONT_ENDS[:1], ids=lambda fe: fe.name)
def test_jobs_agree(fe, tmp_path_factory):
    from musify.api import migrate

    @settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(texts(fe), min_size=2, max_size=5))
    def prop(contents):
        root = tmp_path_factory.mktemp("fuzz-jobs")
        for i, text in enumerate(contents):
            (root / f"d{i}").mkdir()
            (root / f"d{i}" / fe.path).write_bytes(text.encode("utf-8", "surrogateescape"))
        seen = []
        for jobs in (1, 2):
            record, outputs = migrate([str(root)], Options(jobs=jobs), "none", ruleset=RULES, collect=True)
            d = record.to_json(deterministic=True)
            d.pop("options")
            seen.append((outputs.texts, d))
        assert seen[0] == seen[1]

    prop()


def test_emulator_rewriter_leaves_programs_without_launches_alone():
    fe = FRONT_ENDS[0]

    @SETTINGS
    @given(texts(fe))
    def prop(text):
        launches = _bounded(find_launches, text)
        out = _bounded(rewrite, text, "f.cu")
        header = '#line 1 "f.cu"\n'
        assert out.startswith(header)
        if not launches and "__shared__" not in text and "cudaLaunchKernel" not in text:
            assert out[len(header):] == text

    prop()


def test_launch_detection_is_linear():
    """Doubling a pathological input about doubles the time (a quadratic scan quadruples it)."""
    def cost(n):
        text = "(" * n + "k<<<a, b\n" * n + ">" * n
        t0 = time.perf_counter()
        find_launches(text)
        return time.perf_counter() - t0

    small, big = min(cost(20000) for _ in range(2)), min(cost(80000) for _ in range(2))
    assert big < small * 12, (small, big)  # linear: about 4x; quadratic: 16x
