// gelu.cpp -- the Python binding: checks the tensor and launches on the current stream.
#include <torch/extension.h>
#include <torch_musa/csrc/aten/musa/MUSAContext.h>

#include "gelu_kernel.muh"

torch::Tensor gelu_forward(torch::Tensor x)
{
    TORCH_CHECK(x.is_privateuseone() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
                "gelu_forward: contiguous float32 GPU tensor expected");
    auto y = torch::empty_like(x);
    AT_MUSA_CHECK(launch_gelu(x.data_ptr<float>(), y.data_ptr<float>(), static_cast<int>(x.numel()),
                              at::musa::getCurrentMUSAStream()));
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    m.def("forward", &gelu_forward, "GELU (tanh approximation)");
}
