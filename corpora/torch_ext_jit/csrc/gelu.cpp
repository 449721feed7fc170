// gelu.cpp -- the Python binding: checks the tensor and launches on the current stream.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#include "gelu_kernel.cuh"

torch::Tensor gelu_forward(torch::Tensor x)
{
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
                "gelu_forward: contiguous float32 GPU tensor expected");
    auto y = torch::empty_like(x);
    AT_CUDA_CHECK(launch_gelu(x.data_ptr<float>(), y.data_ptr<float>(), static_cast<int>(x.numel()),
                              at::cuda::getCurrentCUDAStream()));
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    m.def("forward", &gelu_forward, "GELU (tanh approximation)");
}
