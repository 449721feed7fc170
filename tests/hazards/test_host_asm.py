"""MU2040 in macro bodies: host assembly in a file without device code is not reported.

The golden cases (`cases/*.cu`) are CUDA files, where a macro's assembly always keeps its error;
these are headers, as met in real trees (PyTorch's vendored valgrind.h, CCCL's thread-yield macros,
cuda_bf16.hpp's shuffle macro)."""

from __future__ import annotations

import pytest

from musify.options import Options
from musify.runner import migrate_text

X86_MACRO = '#define CLIENT_REQUEST(r) __asm__ volatile("xchgl %%ebx,%%ebx" : "=d"(r) : : "cc", "memory")\n'
OPAQUE_MACRO = '#define SHUFFLE(name) { asm volatile ("{" STRINGIFY(name) " %0,%1;\\n}" : "=r"(r) : "r"(v)); }\n'


def asm_errors(text: str, path: str, ruleset) -> list[int]:
    _, ctx, _ = migrate_text(text, path, ruleset, Options())
    return [d.line for d in ctx.found.diagnostics if d.id == "MU2040"]


@pytest.mark.parametrize("text", [
    X86_MACRO,  # valgrind.h's client requests
    "// from __device__ code this is not supported\n" + X86_MACRO,  # the word in a comment only
    '#define YIELD() (asm volatile("pause" :: :);)\nstatic inline void spin() { YIELD(); }\n',  # CCCL
    '#define HOST_ONLY __host__\n' + X86_MACRO,
])
def test_host_macro_assembly_in_a_file_without_device_code_is_not_reported(text, ruleset) -> None:
    assert asm_errors(text, "vendor/valgrind.h", ruleset) == []


@pytest.mark.parametrize(("text", "path"), [
    (X86_MACRO, "kernels/util.cuh"),  # a CUDA file by its name
    ("#define HD __host__ __device__\n" + X86_MACRO, "util.h"),  # a device qualifier in a macro
    ("__global__ void k() {}\n" + X86_MACRO, "util.h"),
    ("#if defined(__CUDA_ARCH__)\n#endif\n" + OPAQUE_MACRO, "cuda_bf16.hpp"),  # device compilation tested
    ("#ifdef __CUDACC__\n#endif\n" + X86_MACRO, "util.hpp"),
    ('#define LANE(x) asm volatile("mov.u32 %0, %%laneid;" : "=r"(x))\n', "util.h"),  # PTX in the template
])
def test_macro_assembly_that_may_be_device_code_keeps_its_error(text, path, ruleset) -> None:
    assert len(asm_errors(text, path, ruleset)) == 1


def test_device_assembly_is_one_error_per_function_with_its_other_statements_as_sites(ruleset) -> None:
    """A device function's assembly statements are one MU2040 at the first, the others its
    sites (FlashInfer's generated kernels held thousands each: 850,551 errors); a function the
    analysis does not see as device code (qualified through a project macro) keeps one error per
    statement, and a Hopper instruction keeps its MU2035 at its own statement."""
    text = ("__device__ unsigned lanes() {\n  unsigned r;\n"
            '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));\n'
            '  asm("membar.gl;");\n'
            '  asm("wgmma.fence.sync.aligned;");\n  return r;\n}\n'
            "__global__ void k(unsigned *p) {\n"
            '  asm volatile("bar.sync 0;");\n  *p = lanes();\n}\n'
            "CUTLASS_DEVICE void two() {\n"  # the macro defined in another header
            '  asm("membar.gl;");\n  asm("membar.cta;");\n}\n')
    _, ctx, _ = migrate_text(text, "kernels.cu", ruleset, Options())
    errors = [(d.line, d.sites) for d in ctx.found.diagnostics if d.id == "MU2040"]
    assert errors == [(3, ((4, 3), (5, 3))), (9, ()), (13, ()), (14, ())]
    assert [d.line for d in ctx.found.diagnostics if d.id == "MU2035"] == [5]
    assert next(d for d in ctx.found.diagnostics if d.id == "MU2040").console().endswith("(+2 more in this function)")
