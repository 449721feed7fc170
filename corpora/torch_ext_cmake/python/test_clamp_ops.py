"""Check clamp_ against torch.clamp: python python/test_clamp_ops.py"""
import torch
import clamp_ops

if __name__ == "__main__":
    x = torch.linspace(-3, 3, 1001).to("cuda")
    want = torch.clamp(x, -1.0, 1.0)
    expected_changes = int(((x < -1.0) | (x > 1.0)).sum())
    changed = clamp_ops.clamp_(x, -1.0, 1.0)
    ok = torch.equal(x, want) and int(changed.item()) == expected_changes
    ok = ok and x.device.type == "cuda"
    print("PASS" if ok else "FAIL", f"{clamp_ops.benchmark():.3f} ms")
