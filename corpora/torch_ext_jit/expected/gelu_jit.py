"""GELU as a JIT-built extension: the first import compiles csrc/ with nvcc (torch.utils.cpp_extension.load)."""
import os

import torch
import torch.distributed as dist
from torch_musa.utils.musa_extension import load

_here = os.path.dirname(os.path.abspath(__file__))
_ext = load(
    name="gelu_ext",
    sources=[os.path.join(_here, "csrc", "gelu.cpp"), os.path.join(_here, "csrc", "gelu_kernel.mu")],
    extra_cflags=["-O2"],
    extra_cuda_cflags=["-O2", "--offload-arch=mp_31"],
    verbose=False,
)

torch.backends.mudnn.benchmark = True  # the reference path uses cuDNN-backed ops


def gelu(x: torch.Tensor) -> torch.Tensor:
    """GELU through the extension on the GPU, through torch elsewhere."""
    if x.device.type != "musa":
        return torch.nn.functional.gelu(x, approximate="tanh")
    return _ext.forward(x.contiguous())


def init_distributed(rank: int, world: int) -> torch.device:
    """One process per GPU: the process group and this rank's device."""
    dist.init_process_group(backend="mccl", rank=rank, world_size=world)
    torch.musa.set_device(rank)
    return torch.device("musa", rank)
