"""Cython files (`.pyx`, `.pxd`, `.pxi`) that bind the CUDA C API are ported: their C names and
the headers of their `extern from` blocks, never their comments or strings (CuPy's
`cupy_backends/cuda/api/runtime.pyx` was copied unchanged)."""

import pytest

from musify.api import migrate
from musify.discover import classify
from musify.options import Options
from musify.passes.includes import build_project_info
from musify.rules import load_ruleset
from musify.runner import migrate_text


@pytest.fixture(scope="module")
def ruleset():
    return load_ruleset()


def port(ruleset, text, path="runtime.pyx", project=None):
    new, ctx, _ = migrate_text(text, path, ruleset, Options(), project)
    again, _, edits = migrate_text(new, path, ruleset, Options(), project)
    assert again == new and not edits, "not a fixed point"
    return new, [d.id for d in ctx.diagnostics]


@pytest.mark.parametrize("name", ["a.pyx", "pkg/b.pxd", "c.pxi"])
def test_cython_files_have_their_own_kind(name):
    assert classify(name) == "cython"


def test_c_names_and_extern_headers_are_ported_comments_and_strings_are_not(ruleset):
    src = ('# cudaMalloc wraps the runtime\n'
           'cdef extern from "cuda_runtime.h" nogil:\n'
           '    ctypedef int Error "cudaError_t"\n'
           '    int cudaMalloc(void** ptr, size_t size)\n'
           'cdef extern from "<cuda_fp16.h>":\n'
           '    pass\n'
           'def malloc(size_t size):\n'
           '    """cudaMalloc, checked."""\n'
           '    status = cudaMalloc(&ptr, size)  # cudaMalloc\n'
           "    raise RuntimeError('cudaMalloc failed')\n")
    new, ids = port(ruleset, src)
    assert new == ('# cudaMalloc wraps the runtime\n'
                   'cdef extern from "musa_runtime.h" nogil:\n'
                   '    ctypedef int Error "cudaError_t"\n'
                   '    int musaMalloc(void** ptr, size_t size)\n'
                   'cdef extern from "<musa_fp16.h>":\n'
                   '    pass\n'
                   'def malloc(size_t size):\n'
                   '    """cudaMalloc, checked."""\n'
                   '    status = musaMalloc(&ptr, size)  # cudaMalloc\n'
                   "    raise RuntimeError('cudaMalloc failed')\n")
    assert "MU1001" not in ids


def test_names_a_cython_file_declares_are_not_unknown_cuda_names(tmp_path):
    """CuPy's nccl.pyx: `NCCL_UINT8 = ncclUint8`, `cdef vector.vector[ncclComm_t] ncclComms`, and
    its fusion code's `cuda_params` parameter; cuda-bindings' enumerators: each is the file's own;
    a name no rule knows and nothing declares still gets MU1001."""
    (tmp_path / "m.pyx").write_text(
        "NCCL_UINT8 = 7\n"
        "cdef vector.vector[int] ncclComms\n"
        "cdef enum: CU_NEW_FLAG = 4\n"
        "cdef extern from 'driver_types.h':\n"
        "    cdef enum cudaNewMode:\n"
        "        cudaNewModeDefault\n"
        "        cudaNewModeOther\n"
        "def emit(cuda_params, int cuda_count=0):\n"
        "    for cuda_item in cuda_params:\n"
        "        ncclComms.push_back(NCCL_UINT8 + cuda_count + cuda_item)\n"
        "    cudaBogusCall()\n")
    record, _ = migrate([str(tmp_path / "m.pyx")], Options(cache=False), mode="out", out_dir=str(tmp_path / "out"))
    unknown = [d.message.split("'")[1] for f in record.files for d in f.diagnostics if d.id == "MU1001"]
    assert unknown == ["cudaBogusCall"]
    assert (tmp_path / "out" / "m.pyx").exists()


def test_a_project_header_an_extern_block_names_follows_its_rename(ruleset):
    project = build_project_info(["pkg/dist.pyx", "pkg/dist.cuh"], {"pkg/dist.cuh": "pkg/dist.muh"})
    new, _ = port(ruleset, "cdef extern from 'dist.cuh' nogil:\n    void init_curand_generator(int seed)\n",
                  "pkg/dist.pyx", project)
    assert new == "cdef extern from 'dist.muh' nogil:\n    void init_curand_generator(int seed)\n"
