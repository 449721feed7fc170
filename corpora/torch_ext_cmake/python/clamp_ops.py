"""Load the clamp_ops library (built by CMake) and expose clamp_ on GPU tensors.

    import clamp_ops
    changed = clamp_ops.clamp_(x, -1.0, 1.0)   # x must be on "cuda"
"""
import os

import torch

_LIB = os.path.join(os.path.dirname(__file__), "..", "build", "libclamp_ops.so")
torch.ops.load_library(_LIB)


def clamp_(x, lo, hi):
    """Clamp x in place; returns how many elements changed (a one-element int tensor)."""
    if not x.is_cuda:
        raise ValueError("clamp_ needs a tensor on the GPU, got one on " + str(x.device))
    return torch.ops.clamp_ops.clamp_(x, lo, hi)


def benchmark(n=1 << 20):
    x = torch.randn(n, device="cuda") * 3
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    clamp_(x, -1.0, 1.0)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)
