// fused_ops.cu -- the ATen side: checks the tensors, picks the device and stream, calls the
// launchers of kernels.cu and checks the launch.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "kernels.cuh"

torch::Tensor scale_add_cuda(const torch::Tensor& x, double a, double b)
{
    TORCH_CHECK(x.is_cuda(), "scale_add: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "scale_add: x must be float32");
    const at::cuda::OptionalCUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    launch_scale_add(xc.data_ptr<float>(), y.data_ptr<float>(), static_cast<float>(a), static_cast<float>(b),
                     static_cast<int>(xc.numel()), stream);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor row_sum_cuda(const torch::Tensor& x)
{
    TORCH_CHECK(x.device().type() == c10::DeviceType::CUDA, "row_sum: x must live on the GPU");
    TORCH_CHECK(x.dim() == 2, "row_sum: x must be a matrix");
    const c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto out = torch::empty({xc.size(0)}, xc.options());
    AT_CUDA_CHECK(launch_row_sum(xc.data_ptr<float>(), out.data_ptr<float>(), static_cast<int>(xc.size(0)),
                                 static_cast<int>(xc.size(1)), at::cuda::getCurrentCUDAStream()));
    return out;
}
