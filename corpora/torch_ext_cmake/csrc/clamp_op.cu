// clamp_op.cu -- the ATen operator: runs the kernel on the tensor's stream and records an event
// so the caller can time it.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <ATen/cuda/CUDAEvent.h>

#include "clamp_kernel.cuh"

at::Tensor clamp_inplace_cuda(at::Tensor& x, double lo, double hi)
{
    TORCH_CHECK(x.device().type() == at::kCUDA && x.is_contiguous(), "clamp_: contiguous GPU tensor expected");
    c10::cuda::CUDAStreamGuard stream_guard(c10::cuda::getCurrentCUDAStream());
    at::cuda::CUDAStream stream = at::cuda::getCurrentCUDAStream();
    auto changed = at::zeros({1}, x.options().dtype(at::kInt));
    at::cuda::CUDAEvent done;
    C10_CUDA_CHECK(launch_clamp(x.data_ptr<float>(), static_cast<int>(x.numel()), static_cast<float>(lo),
                                static_cast<float>(hi), reinterpret_cast<unsigned int*>(changed.data_ptr<int>()),
                                stream.stream()));
    done.record(stream);
    return changed;
}
