"""PyTorch C++ (ATen/c10): the name rules and the structural rules of rules/torch_cpp/."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from musify.frontend.scanner import CodeMap, scan_python
from musify.options import Options
from musify.passes import torch_cpp
from musify.rules import load_ruleset
from musify.runner import migrate_text


@pytest.fixture(scope="module")
def rules():
    return load_ruleset()


def port(rules, text: str) -> tuple[str, list]:
    new, ctx, _ = migrate_text(text, "op.cu", rules, Options())
    again, _, edits = migrate_text(new, "op.cu", rules, Options())
    assert edits == [] and again == new, f"not a fixed point:\n{new}"
    return new, ctx.diagnostics


def test_streams_guards_checks_and_headers(rules):
    src = ("#include <ATen/cuda/CUDAContext.h>\n"
           "#include <c10/cuda/CUDAGuard.h>\n"
           "#include <ATen/cuda/detail/KernelUtils.h>\n"
           "void f(const at::Tensor& x) {\n"
           "  const at::cuda::OptionalCUDAGuard guard(x.device());\n"
           "  cudaStream_t s = at::cuda::getCurrentCUDAStream();\n"
           "  C10_CUDA_KERNEL_LAUNCH_CHECK();\n"
           "  bool is_cuda = x.is_cuda() && x.device().type() == c10::DeviceType::CUDA;  // is_cuda()\n"
           "  auto k = at::kCUDA;\n"
           "}\n")
    new, diags = port(rules, src)
    assert new == ("#include <torch_musa/csrc/aten/musa/MUSAContext.h>\n"
                   "#include <torch_musa/csrc/core/MUSAGuard.h>\n"
                   "#include <ATen/cuda/detail/KernelUtils.h>\n"
                   "void f(const at::Tensor& x) {\n"
                   "  const at::musa::OptionalMUSAGuard guard(x.device());\n"
                   "  musaStream_t s = at::musa::getCurrentMUSAStream();\n"
                   "  C10_MUSA_KERNEL_LAUNCH_CHECK();\n"
                   "  bool is_cuda = x.is_privateuseone() && x.device().type() == c10::DeviceType::PrivateUse1;"
                   "  // is_cuda()\n"
                   "  auto k = at::kPrivateUse1;\n"
                   "}\n")
    assert [d.id for d in diags] == ["MU6052"]


def test_a_dropout_kernels_random_numbers(rules):
    """The generator, its Philox state and the kernel's unpack, as flash-attn and xformers use
    them: each name has a torch_musa counterpart, so none is left for the user to find (the
    generator was MU1001, getDefaultCUDAGenerator and philox_cuda_state were kept silently)."""
    src = ("#include <ATen/cuda/CUDAGeneratorImpl.h>\n"
           "#include <ATen/cuda/CUDAGraphsUtils.cuh>\n"
           "#include <ATen/cuda/detail/UnpackRaw.cuh>\n"
           "__global__ void drop(at::PhiloxCudaState philox) {\n"
           "  auto seeds = at::cuda::philox::unpack(philox);\n"
           "}\n"
           "void f(std::optional<at::Generator> gen_) {\n"
           "  auto gen = at::get_generator_or_default<at::CUDAGeneratorImpl>(\n"
           "      gen_, at::cuda::detail::getDefaultCUDAGenerator());\n"
           "  std::lock_guard<std::mutex> lock(gen->mutex_);\n"
           "  at::PhiloxCudaState state = gen->philox_cuda_state(4);\n"
           "}\n")
    new, diags = port(rules, src)
    assert new == ("#include <torch_musa/csrc/aten/musa/MUSAGeneratorImpl.h>\n"
                   "#include <torch_musa/csrc/aten/musa/MUSAGraphsUtils.muh>\n"
                   "#include <torch_musa/csrc/aten/musa/UnpackRaw.muh>\n"
                   "__global__ void drop(at::PhiloxMusaState philox) {\n"
                   "  auto seeds = at::musa::philox::unpack(philox);\n"
                   "}\n"
                   "void f(std::optional<at::Generator> gen_) {\n"
                   "  auto gen = at::get_generator_or_default<at::MUSAGeneratorImpl>(\n"
                   "      gen_, at::musa::detail::getDefaultMUSAGenerator());\n"
                   "  std::lock_guard<std::mutex> lock(gen->mutex_);\n"
                   "  at::PhiloxMusaState state = gen->philox_musa_state(4);\n"
                   "}\n")
    assert [d.id for d in diags] == []


def test_pytorch_headers_torch_musa_ships_ported(rules):
    """Headers torch_musa ships as its build ported them (share/generated_cuda_compatible/), as
    torch_musa's own sources and Moore Threads' sgl-kernel port include them; one it does not
    name stays, with MU6052 (flash-attn's PhiloxUtils.cuh)."""
    src = ("#include <ATen/cuda/Atomic.cuh>\n#include <ATen/cuda/detail/IndexUtils.cuh>\n"
           "#include <ATen/cuda/detail/TensorInfo.cuh>\n#include <ATen/cuda/CUDAUtils.h>\n"
           "#include <ATen/cuda/CUDADataType.h>\n#include <THC/THCAtomics.cuh>\n#include <ATen/cuda/PhiloxUtils.cuh>\n")
    new, diags = port(rules, src)
    assert new == ("#include <ATen/musa/Atomic.muh>\n#include <ATen/musa/detail/IndexUtils.muh>\n"
                   "#include <ATen/musa/detail/TensorInfo.muh>\n#include <ATen/musa/MUSAUtils.h>\n"
                   "#include <torch_musa/csrc/aten/musa/MUSADtype.muh>\n#include <THC/THCAtomics.muh>\n"
                   "#include <ATen/cuda/PhiloxUtils.cuh>\n")
    assert [(d.id, d.line) for d in diags] == [("MU6052", 7)]


def test_names_a_registration_macro_declares_are_the_projects(tmp_path):
    """TORCH_LIBRARY's namespace and library object are declarations (vLLM's
    STABLE_TORCH_LIBRARY_FRAGMENT(_C_cuda_utils, cuda_utils) got MU1001 at each use of
    `cuda_utils`), in every file of the run; a vendor-looking name nothing declares still is one."""
    ops = ("STABLE_TORCH_LIBRARY_FRAGMENT(_C_cuda_utils, cuda_utils) {\n  cuda_utils.def(\"g() -> int\");\n}\n"
           "TORCH_LIBRARY(cuda_ops, cuda_lib) { cuda_lib.def(\"f(Tensor x) -> Tensor\"); }\n"
           "TORCH_LIBRARY_IMPL(cuda_ops, CUDA, cuda_impl) { cuda_impl.impl(\"f\", &f); }\n")
    more = "void more(torch::Library& lib) { cuda_utils.def(\"h() -> int\"); cudaFooBar(1); }\n"
    files = _stable_run(tmp_path, ("ops.cpp", ops), ("more.cpp", more))
    assert files["ops.cpp"].diagnostics == []
    assert [(d.id, d.name) for d in files["more.cpp"].diagnostics] == [("MU1001", "cudaFooBar")]


STABLE_CHECKS = ("#include <torch/csrc/stable/macros.h>\n"
                 "void f(float* p) {\n  STD_CUDA_CHECK(cudaMemsetAsync(p, 0, 4));\n  STD_CUDA_KERNEL_LAUNCH_CHECK();\n}\n")


def _stable_run(tmp_path, *files: tuple[str, str]):
    from musify import api

    for name, text in files:
        (tmp_path / "in" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "in" / name).write_text(text)
    record, _ = api.migrate([str(tmp_path / "in")], Options(cache=False), "out", str(tmp_path / "out"))
    return {Path(f.path).name: f for f in record.files}


def test_the_stable_abis_checks_are_reported_until_the_project_defines_them(tmp_path):
    """PyTorch's STD_CUDA_CHECK reads a cudaError_t and torch_musa has no counterpart: each use is
    MU1002 (it was kept with no word), until a file of the project #defines its own (what MUSA
    ports do), which every file of the run then uses instead."""
    alone = _stable_run(tmp_path / "a", ("ops.cu", STABLE_CHECKS))["ops.cu"]
    assert [(d.id, d.name) for d in alone.diagnostics] == [("MU1002", "STD_CUDA_CHECK"),
                                                          ("MU1002", "STD_CUDA_KERNEL_LAUNCH_CHECK")]
    assert alone.unconverted == {"STD_CUDA_CHECK": 1, "STD_CUDA_KERNEL_LAUNCH_CHECK": 1}
    own = ("#pragma once\n#ifndef STD_CUDA_CHECK\n"
           "#define STD_CUDA_CHECK(EXPR) do { cudaError_t e = (EXPR); TORCH_CHECK(e == cudaSuccess); } while (0)\n"
           "#endif\n")
    both = _stable_run(tmp_path / "b", ("ops.cu", STABLE_CHECKS), ("include/checks.h", own))
    assert [(d.id, d.name) for d in both["ops.cu"].diagnostics] == [("MU1002", "STD_CUDA_KERNEL_LAUNCH_CHECK")]
    assert both["ops.cu"].unconverted == {"STD_CUDA_KERNEL_LAUNCH_CHECK": 1}
    assert both["ops.cu"].references == {**alone.references, "unconverted": 1}
    assert both["checks.h"].diagnostics == [] and both["checks.h"].unconverted == {}


def test_dispatch_key_and_case_labels(rules):
    src = ("TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl(\"f\", &f); }\n"
           "int a(c10::DeviceType t) { switch (t) { case c10::DeviceType::CUDA: return 1; default: return 0; } }\n"
           "int b(c10::DeviceType t) {\n"
           "  switch (t) {\n"
           "  case c10::DeviceType::CUDA: return 1;\n"
           "  case c10::DeviceType::PrivateUse1: return 2;\n"
           "  }\n"
           "  return 0;\n"
           "}\n")
    new, diags = port(rules, src)
    lines = new.splitlines()
    assert lines[0].startswith("TORCH_LIBRARY_IMPL(myops, PrivateUse1, m)")
    assert "case c10::DeviceType::PrivateUse1: return 1;" in lines[1]
    assert lines[4] == "  case c10::DeviceType::CUDA: return 1;"  # kept: would duplicate the next label
    assert [(d.id, d.line) for d in diags] == [("MU6050", 5)]


def test_stable_abi_dispatch_key(rules):
    """xformers' sparse24 kernels register with the stable ABI's macro: the same dispatch key."""
    src = ("STABLE_TORCH_LIBRARY_IMPL(xformers, CUDA, m) {\n  m.impl(\"gemm\", TORCH_BOX(gemm));\n}\n"
           "STABLE_TORCH_LIBRARY_IMPL(xformers, AutogradCUDA, m) {}\n"
           "MY_STABLE_TORCH_LIBRARY_IMPL(xformers, CUDA, m) {}\n")
    new, diags = port(rules, src)
    assert new.splitlines()[0] == "STABLE_TORCH_LIBRARY_IMPL(xformers, PrivateUse1, m) {"
    assert new.splitlines()[3] == "STABLE_TORCH_LIBRARY_IMPL(xformers, AutogradPrivateUse1, m) {}"
    assert new.splitlines()[4] == "MY_STABLE_TORCH_LIBRARY_IMPL(xformers, CUDA, m) {}"  # another macro
    assert diags == []


def test_registration_h_expand_macros(rules):
    """vLLM's csrc/core/registration.h forwards TORCH_LIBRARY_IMPL_EXPAND to TORCH_LIBRARY_IMPL
    (Aphrodite and GPTQModel copy it): its dispatch key is turned the same way, and the blocks'
    names are the project's own."""
    src = ("TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {}\n"
           "TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CUDA, m) {\n  m.impl(\"gemm\", &gemm);\n}\n"
           "TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, AutogradCUDA, m) {}\n")
    new, diags = port(rules, src)
    assert new.splitlines()[1] == "TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, PrivateUse1, m) {"
    assert new.splitlines()[4] == "TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, AutogradPrivateUse1, m) {}"
    assert diags == []


def _enclosing_block_per_character(text: str, code, pos: int):
    """`torch_cpp._enclosing_block` as it was written, one character at a time: the reference."""
    depth, i = 0, pos
    while i > 0:
        i -= 1
        if text[i] not in "{}" or not code.is_code(i):
            continue
        if text[i] == "}":
            depth += 1
        elif depth:
            depth -= 1
        else:
            break
    else:
        return None
    depth = 0
    for j in range(i, len(text)):
        if text[j] in "{}" and code.is_code(j):
            depth += 1 if text[j] == "{" else -1
            if depth == 0:
                return i, j + 1
    return None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["{", "}", "x", " ", "/*", "*/", "//", "\n", '"', '{"}"', "'}'", "case"]), max_size=30))
def test_enclosing_block_is_the_per_character_search(pieces: list[str]) -> None:
    text = "".join(pieces)
    code = CodeMap(scan_python(text).spans)
    for pos in range(len(text) + 1):
        assert torch_cpp._enclosing_block(text, code, pos) == _enclosing_block_per_character(text, code, pos), (text, pos)


def test_the_deprecated_type_api_is_reported(rules):
    """`torch::zeros({n}, torch::CUDA(x.scalar_type()))` (torch-points-kernels' chamfer distance)
    makes options from the CUDA backend's DeprecatedTypeProperties, which a PrivateUse1 backend
    has no counterpart of: MU1002 saying what to write instead (it was MU1001, "no rule knows
    it", on `CUDA`). `torch::CPU(...)` is left alone."""
    text = ("torch::Tensor f(torch::Tensor x, int n) {\n"
            "  auto d = torch::zeros({n}, torch::CUDA(x.scalar_type()));\n"
            "  auto e = at::zeros({n}, at::CUDA(at::kFloat));\n"
            "  return torch::zeros({n}, torch::CPU(torch::kInt)) + d + e;\n}\n")
    new, diags = port(rules, text)
    assert new == text
    assert [(d.id, d.name, d.line) for d in diags] == [("MU1002", "torch::CUDA", 2), ("MU1002", "at::CUDA", 3)]
    assert all("x.options()" in d.message for d in diags)
