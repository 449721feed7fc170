"""Check fused_ops against plain PyTorch on the GPU: python tests/test_fused_ops.py"""
import torch
import torch_musa

import fused_ops


def main() -> int:
    if not torch.musa.is_available():
        print("SKIP no GPU")
        return 0
    torch.manual_seed(0)
    device = "musa:0"
    x = torch.randn(4096, device=device)
    y = fused_ops.scale_add(x, 2.0, 0.5)
    torch.musa.synchronize()
    ok = torch.allclose(y, 2.0 * x + 0.5)
    m = torch.randn(64, 300).musa()
    ok = ok and torch.allclose(fused_ops.row_sum(m), m.sum(dim=1), atol=1e-4)
    ok = ok and fused_ops.backend_of(m) == "gpu"  # the binding's name for "cuda"
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
