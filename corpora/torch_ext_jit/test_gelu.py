"""Compare the extension with torch's GELU under autocast: python test_gelu.py"""
import torch

from gelu_jit import gelu


def test(device: str = "cuda") -> bool:
    x = torch.randn(10007, device=device)
    with torch.cuda.amp.autocast(enabled=False):
        got = gelu(x)
    want = torch.nn.functional.gelu(x.cpu(), approximate="tanh")
    return torch.allclose(got.cpu(), want, atol=1e-5)


if __name__ == "__main__":
    print("PASS" if test() else "FAIL", "on", f"cuda:{torch.cuda.current_device()}")
