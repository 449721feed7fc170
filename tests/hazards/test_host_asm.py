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


RISCV_VECTORS = ('void dot(const int8_t *a, size_t vl) {\n'
                 '    __asm__ volatile(\n'
                 '        "vsetvli t0, %[vl], e8, m1, ta, ma \\n\\t"  // the vector length; then add\n'
                 '        "vadd.vv v0, v0, v1 \\n\\t"\n'
                 '        "vsub.vx v2, v2, t0 \\n\\t"\n'
                 '        : : [vl] "r"(vl) : "t0");\n'
                 '}\n')


@pytest.mark.parametrize(("text", "path"), [
    (RISCV_VECTORS, "ggml-cpu/arch/riscv/quants.c"),  # llama.cpp's RISC-V vector kernels
    ('static inline void all_lanes() {\n    __asm__ volatile("mov.m.x m0, x0, 0xFF");\n}\n', "et-kernels/block_ops.h"),
    (('static inline float32x4_t add(float32x4_t a, float32x4_t b) {\n'
      '    asm("vadd.f32 %q0, %q1, %q2" : "=w"(a) : "w"(a), "w"(b));\n    return a;\n}\n'), "neon_util.h"),  # Arm32 NEON
    # composable_kernel's asm labels: an LLVM intrinsic bound to a declaration, no statement at all
    (("__device__ half_t load_fp16(int32x4_t r, index_t v, index_t s, index_t g)"
      ' __asm("llvm.amdgcn.raw.buffer.load.f16");\n'), "ck/utility/amd_buffer_addressing.hpp"),
])
def test_other_instruction_sets_with_ptx_like_suffixes_are_host_assembly(text, path, ruleset) -> None:
    """Their instructions share a sign with PTX (`vadd.`, `mov.`, `.f32`, `.f16`) but, unlike every
    PTX instruction, end with no ';' (a ';' in a comment of the statement does not count):
    llama.cpp's RISC-V and Esperanto CPU kernels made 106 false errors and a failed run."""
    assert asm_errors(text, path, ruleset) == []


def test_ptx_outside_a_visible_device_function_keeps_its_error_in_any_file(ruleset) -> None:
    """A function qualified through another header's macro, in a file with no device word: its
    PTX (a sign and the ';' ending the instruction) is still an error."""
    text = 'DEV unsigned lane() {\n    unsigned r;\n    asm("mov.u32 %0, %%laneid;" : "=r"(r));\n    return r;\n}\n'
    assert asm_errors(text, "util.h", ruleset) == [3]
