"""Kernels without a main (a PyTorch-extension-like file): found, harnessed for the types that
compile, verified original against port; the ones that cannot be harnessed are listed with why."""

from __future__ import annotations

from verify_support import INPUTS, ported, requires_cxx, verify

from musify.verify.harness import find_kernels, slice_source

EXT = INPUTS / "torch_like_ext" / "ops.cu"


def test_kernels_and_their_parameters_are_read():
    kernels = {k.name: k for k in find_kernels(EXT.read_text())}
    assert set(kernels) == {"ops::axpy_kernel", "ops::clamp_kernel", "ops::block_sum_kernel", "ops::pair_kernel"}
    axpy = kernels["ops::axpy_kernel"]
    assert axpy.type_params == ["scalar_t"] and axpy.params[:2] == [("ptr", "scalar_t"), ("ptr", "scalar_t")]
    assert axpy.param_names == ["x", "y", "a", "n"] and not axpy.reason
    assert "'Pair p' is not a pointer" in kernels["ops::pair_kernel"].reason


def test_the_slice_leaves_pytorch_and_host_code_out_and_keeps_lines():
    text = slice_source(EXT.read_text(), EXT)
    assert "torch::" not in text and "<torch/" not in text and "PYBIND11" not in text and "AT_DISPATCH" not in text
    assert "clamp_value" in text and "struct Pair" in text
    line = next(n for n, t in enumerate(EXT.read_text().splitlines(), 1) if "__global__ void clamp_kernel" in t)
    assert f'#line {line} "{EXT}"\n__global__ void clamp_kernel' in text


@requires_cxx
def test_pytorch_like_extension_kernels_verify_through_a_harness(tmp_path):
    original, port, record = ported(tmp_path, INPUTS / "torch_like_ext")
    section = verify(record, port, original)
    harnessed = [p for p in section["programs"] if p["kind"] == "harness"]
    assert [p["name"] for p in harnessed] == ["torch_like_ext/ops.cu"]
    assert harnessed[0]["archs"]["mp_31"]["verdict"] == "pass", harnessed[0]
    left_out = {k["kernel"]: k["reason"] for k in section["unharnessed"]}
    assert "ops::pair_kernel" in left_out
    f = next(f for f in record.files if f.path.endswith("ops.cu"))
    assert any(d.id == "MU5004" and d.name == "ops::pair_kernel" for d in f.diagnostics)
