// fused_ops.cu -- the ATen side: checks the tensors, picks the device and stream, calls the
// launchers of kernels.cu and checks the launch.
#include <torch/extension.h>
#include <torch_musa/csrc/aten/musa/MUSAContext.h>
#include <torch_musa/csrc/core/MUSAGuard.h>

#include "kernels.muh"

torch::Tensor scale_add_cuda(const torch::Tensor& x, double a, double b)
{
    TORCH_CHECK(x.is_privateuseone(), "scale_add: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "scale_add: x must be float32");
    const at::musa::OptionalMUSAGuard guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    musaStream_t stream = at::musa::getCurrentMUSAStream();
    launch_scale_add(xc.data_ptr<float>(), y.data_ptr<float>(), static_cast<float>(a), static_cast<float>(b),
                     static_cast<int>(xc.numel()), stream);
    C10_MUSA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor row_sum_cuda(const torch::Tensor& x)
{
    TORCH_CHECK(x.device().type() == c10::DeviceType::PrivateUse1, "row_sum: x must live on the GPU");
    TORCH_CHECK(x.dim() == 2, "row_sum: x must be a matrix");
    const c10::musa::MUSAGuard guard(x.device());
    auto xc = x.contiguous();
    auto out = torch::empty({xc.size(0)}, xc.options());
    AT_MUSA_CHECK(launch_row_sum(xc.data_ptr<float>(), out.data_ptr<float>(), static_cast<int>(xc.size(0)),
                                 static_cast<int>(xc.size(1)), at::musa::getCurrentMUSAStream()));
    return out;
}
