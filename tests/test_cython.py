"""Cython files (`.pyx`, `.pxd`, `.pxi`) that bind the CUDA API are ported by the C names their
`cdef extern from` blocks declare (a cname string added or renamed) and the headers those blocks
name; their Cython and Python names stay, being the module's Python API (CuPy's
`cupy_backends/cuda` modules were copied unchanged)."""

import pytest

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


def test_declared_c_names_get_musa_cnames_and_the_rest_stays(ruleset):
    src = ('# cudaMalloc wraps the runtime\n'
           'cdef extern from "cuda_runtime.h" nogil:\n'
           '    ctypedef int Error "cudaError_t"\n'
           '    ctypedef void* cudaStream_t\n'
           '    int cudaMalloc(void** ptr, size_t size)\n'
           '    int cudaMemcpyAsync(void* dst, const void* src, size_t n,\n'
           '                        int kind, cudaStream_t stream)\n'
           '    int cudaNotARealName(int x)\n'
           '    ctypedef void (*cudaHostFn_t)(void* data)\n'
           'cdef extern from "<cuda_fp16.h>":\n'
           '    pass\n'
           'cpdef enum:\n'
           '    CUDA_R_32F = 0\n'
           'def malloc(size_t size):\n'
           '    """cudaMalloc, checked."""\n'
           '    status = cudaMalloc(&ptr, size)  # cudaMalloc\n'
           "    raise RuntimeError('cudaMalloc failed')\n")
    new, ids = port(ruleset, src)
    assert new == ('# cudaMalloc wraps the runtime\n'
                   'cdef extern from "musa_runtime.h" nogil:\n'
                   '    ctypedef int Error "musaError_t"\n'
                   '    ctypedef void* cudaStream_t "musaStream_t"\n'
                   '    int cudaMalloc "musaMalloc"(void** ptr, size_t size)\n'
                   '    int cudaMemcpyAsync "musaMemcpyAsync"(void* dst, const void* src, size_t n,\n'
                   '                        int kind, cudaStream_t stream)\n'
                   '    int cudaNotARealName(int x)\n'
                   '    ctypedef void (*cudaHostFn_t "musaHostFn_t")(void* data)\n'
                   'cdef extern from "<musa_fp16.h>":\n'
                   '    pass\n'
                   'cpdef enum:\n'  # the module's own constants, read by Python code: kept
                   '    CUDA_R_32F = 0\n'
                   'def malloc(size_t size):\n'
                   '    """cudaMalloc, checked."""\n'
                   '    status = cudaMalloc(&ptr, size)  # cudaMalloc\n'
                   "    raise RuntimeError('cudaMalloc failed')\n")
    assert "MU1001" not in ids


def test_enumerators_variables_structs_and_array_sizes(ruleset):
    """CuPy's nccl.pxd and nvtx.pxd, cuda-bindings' cyruntime.pxd: an enumerator keeps its value,
    an existing cname is renamed in place, an array's size is no declared name."""
    src = ("cdef extern from 'nccl.h':\n"
           "    cdef enum:\n"
           "        NCCL_UNIQUE_ID_BYTES = 128\n"
           "    ctypedef struct ncclUniqueId 'ncclUniqueId':\n"
           "        char internal[NCCL_UNIQUE_ID_BYTES]\n"
           "    cdef struct CUstream_st 'CUstream_st':\n"
           "        pass\n"
           "    cdef int CUDA_VERSION\n"
           "    cdef enum cudaMemcpyKind:\n"
           "        cudaMemcpyHostToDevice\n"
           "        cudaMemcpyDeviceToHost, cudaMemcpyDefault\n")
    new, _ = port(ruleset, src, "nccl.pxd")
    assert new == ("cdef extern from 'mccl.h':\n"
                   "    cdef enum:\n"
                   '        NCCL_UNIQUE_ID_BYTES "MCCL_UNIQUE_ID_BYTES" = 128\n'
                   "    ctypedef struct ncclUniqueId 'mcclUniqueId':\n"
                   "        char internal[NCCL_UNIQUE_ID_BYTES]\n"
                   "    cdef struct CUstream_st 'MUstream_st':\n"
                   "        pass\n"
                   '    cdef int CUDA_VERSION "MUSA_COMP_VERSION"\n'
                   '    cdef enum cudaMemcpyKind "musaMemcpyKind":\n'
                   '        cudaMemcpyHostToDevice "musaMemcpyHostToDevice"\n'
                   '        cudaMemcpyDeviceToHost "musaMemcpyDeviceToHost", cudaMemcpyDefault "musaMemcpyDefault"\n')


def test_a_name_musa_lacks_is_reported_at_its_declaration(ruleset):
    new, ids = port(ruleset, "cdef extern from 'cuda_runtime.h':\n    void cudaGridDependencySynchronize()\n")
    assert new == "cdef extern from 'musa_runtime.h':\n    void cudaGridDependencySynchronize()\n"
    assert ids == ["MU2033"]  # the rule's own diagnostic: Hopper programmatic launch, which MUSA lacks


def test_a_project_header_an_extern_block_names_follows_its_rename(ruleset):
    project = build_project_info(["pkg/dist.pyx", "pkg/dist.cuh"], {"pkg/dist.cuh": "pkg/dist.muh"})
    new, _ = port(ruleset, "cdef extern from 'dist.cuh' nogil:\n    void init_curand_generator(int seed)\n",
                  "pkg/dist.pyx", project)
    assert new == "cdef extern from 'dist.muh' nogil:\n    void init_curand_generator(int seed)\n"


def test_cython_compiles_the_port_to_c_that_calls_musa(ruleset, tmp_path):
    """The proof of a cname: Cython's own C for the ported module calls the MUSA names, while the
    module's Cython names are what it was written with."""
    cython_compiler = pytest.importorskip("Cython.Compiler.Main")
    src = ('cdef extern from "cuda_runtime.h" nogil:\n'
           '    ctypedef void* cudaStream_t\n'
           '    int cudaMalloc(void** ptr, size_t size)\n'
           '    int cudaStreamSynchronize(cudaStream_t stream)\n'
           '    cdef enum cudaMemcpyKind:\n'
           '        cudaMemcpyHostToDevice\n'
           'def run(size_t size):\n'
           '    cdef void* ptr\n'
           '    cdef cudaStream_t stream = NULL\n'
           '    return cudaMalloc(&ptr, size) + cudaStreamSynchronize(stream) + cudaMemcpyHostToDevice\n')
    new, _ = port(ruleset, src)
    (tmp_path / "m.pyx").write_text(new)
    options = cython_compiler.CompilationOptions(cython_compiler.default_options, language_level=3,
                                                 output_file=str(tmp_path / "m.c"))
    assert cython_compiler.compile(str(tmp_path / "m.pyx"), options).num_errors == 0
    code = [ln for ln in (tmp_path / "m.c").read_text().splitlines() if "__pyx_v_" in ln and not ln.lstrip().startswith("*")]
    calls = " ".join(code)
    assert "musaMalloc(" in calls and "musaStreamSynchronize(" in calls and "musaMemcpyHostToDevice" in calls
    assert "cudaMalloc" not in calls and "cudaStream" not in calls
