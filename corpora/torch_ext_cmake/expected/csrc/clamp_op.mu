// clamp_op.cu -- the ATen operator: runs the kernel on the tensor's stream and records an event
// so the caller can time it.
#include <ATen/ATen.h>
#include <torch_musa/csrc/aten/musa/MUSAContext.h>
#include <torch_musa/csrc/core/MUSAGuard.h>
#include <torch_musa/csrc/core/MUSAStream.h>
#include <torch_musa/csrc/core/MUSAException.h>
#include <torch_musa/csrc/aten/musa/MUSAEvent.h>

#include "clamp_kernel.muh"

at::Tensor clamp_inplace_cuda(at::Tensor& x, double lo, double hi)
{
    TORCH_CHECK(x.device().type() == at::kPrivateUse1 && x.is_contiguous(), "clamp_: contiguous GPU tensor expected");
    c10::musa::MUSAStreamGuard stream_guard(c10::musa::getCurrentMUSAStream());
    at::musa::MUSAStream stream = at::musa::getCurrentMUSAStream();
    auto changed = at::zeros({1}, x.options().dtype(at::kInt));
    at::musa::MUSAEvent done;
    C10_MUSA_CHECK(launch_clamp(x.data_ptr<float>(), static_cast<int>(x.numel()), static_cast<float>(lo),
                                static_cast<float>(hi), reinterpret_cast<unsigned int*>(changed.data_ptr<int>()),
                                stream.stream()));
    done.record(stream);
    return changed;
}
