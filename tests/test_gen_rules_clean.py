"""The committed generated rule files are exactly what `python -m tools.gen_rules` writes now,
and the scanner and naming pattern it is built on behave as documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.gen_rules.headers import macro_aliases, scan_text
from tools.gen_rules.naming import has_vendor_word, musa_header, musa_name

REPO = Path(__file__).resolve().parents[1]
CUDA_INCLUDE = Path("/usr/local/cuda/include")


def test_regenerating_gives_the_committed_files(tmp_path: Path) -> None:
    from tools.gen_rules.__main__ import DEFAULT_TABLES, OUTPUTS, main

    if not (CUDA_INCLUDE / "cuda.h").is_file():
        pytest.skip("CUDA headers not installed")
    if not all(t.is_file() for t in DEFAULT_TABLES):
        pytest.skip("musify reference tables (which decide `inferred`) not present")
    assert main(["--cuda-include", str(CUDA_INCLUDE), "--out", str(tmp_path)]) == 0
    stale = [rel for rel, _ in OUTPUTS.values()
             if (tmp_path / rel).read_bytes() != (REPO / "rules" / rel).read_bytes()]
    assert not stale, f"rerun `python -m tools.gen_rules` and commit: {stale}"


@pytest.mark.parametrize(("cuda", "musa"), [
    ("cudaMalloc", "musaMalloc"), ("cudaError_t", "musaError_t"), ("cuMemAlloc_v2", "muMemAlloc_v2"),
    ("CUdeviceptr", "MUdeviceptr"), ("CUDA_SUCCESS", "MUSA_SUCCESS"), ("CU_CTX_MAP_HOST", "MU_CTX_MAP_HOST"),
    ("PFN_cuInit_v2000", "PFN_muInit_v2000"), ("cuuint32_t", "muuint32_t"), ("__nv_bfloat16", "__mt_bfloat16"),
    ("__NV_E4M3", "__MT_E4M3"), ("cudaErrorNvlinkUncorrectable", "musaErrorMtlinkUncorrectable"),
    ("CU_JIT_INPUT_CUBIN", "MU_JIT_INPUT_MUBIN"), ("__nvvm_atom_add_gen_f", "__mtvm_atom_add_gen_f"),
    ("CUCoredumpGenerationFlags", "MUCoredumpGenerationFlags"),
])
def test_naming_pattern(cuda: str, musa: str) -> None:
    assert musa_name(cuda) == musa


@pytest.mark.parametrize("word", ["CUSTOM", "CURRENT", "Cubic", "Accumulate", "ACCUMULATOR", "threadIdx",
                                  "__half", "float4", "CU_FLUSH_TARGET_CURRENT_CTX"[3:]])
def test_words_that_merely_contain_cu_are_kept(word: str) -> None:
    assert musa_name(word) == word and not has_vendor_word(word)


def test_header_names() -> None:
    assert musa_header("cuda_runtime.h") == "musa_runtime.h"
    assert musa_header("crt/host_defines.h") == "crt/host_defines.h"


HEADER = r'''
#ifndef __DEMO_H__
#define __DEMO_H__
#define cuDemoAlloc cuDemoAlloc_v2
#define DEMO_FLAG 0x1 /* a flag */
#define __dv(v) = v
#define __DEF_IF_HOST { }
#if defined(__cplusplus)
extern "C" {
#endif
typedef struct CUctx_st *CUcontext;
typedef enum cudaDemo_enum { cudaDemoA = 0, cudaDemoB = (1 << 2), cudaDemoC } cudaDemo;
typedef void (CUDART_CB *cudaDemoCallback_t)(void *userData);
extern __host__ cudaError_t CUDARTAPI cudaDemo(int x, int flags __dv(0));
CUresult cuDemoAlloc(void **p,
                     size_t n);
struct __device_builtin__ __align__(16) demo4 { float x, y; };
int __device_builtin__ __STORAGE__ demoIdx;
__SM_DECL__ unsigned __demoA(const void *p) __DEF_IF_HOST
__SM_DECL__ unsigned __demoB(const void *p) __DEF_IF_HOST
namespace nvdemo { namespace wmma { void load_demo(int); } }
#if defined(__cplusplus)
}
#endif
#endif
'''


def test_scanner_finds_each_kind_of_declaration() -> None:
    decls = scan_text(HEADER, "demo.h")
    found = {(d.name, d.kind) for d in decls}
    expected = {
        ("cuDemoAlloc", "macro"), ("DEMO_FLAG", "macro"), ("CUctx_st", "type"), ("CUcontext", "type"),
        ("cudaDemo_enum", "enum"), ("cudaDemoA", "enumerator"), ("cudaDemoB", "enumerator"),
        ("cudaDemoC", "enumerator"), ("cudaDemo", "type"), ("cudaDemoCallback_t", "type"),
        ("cudaDemo", "function"), ("cuDemoAlloc", "function"), ("demo4", "type"),
        ("demoIdx", "variable"), ("__demoA", "function"), ("__demoB", "function"),
        ("nvdemo", "namespace"), ("load_demo", "function"),
    }
    assert expected <= found, expected - found
    assert ("__DEMO_H__", "macro") not in found  # include guard
    assert not {n for n, k in found if k == "function"} & {"__dv", "__align__", "CUDARTAPI"}
    assert next(d for d in decls if d.name == "cuDemoAlloc" and d.kind == "function").line == 15
    assert [(d.name, d.kind) for d in macro_aliases(decls)] == [("cuDemoAlloc_v2", "function")]
    assert next(d for d in decls if d.name == "load_demo").scope == "nvdemo::wmma"
