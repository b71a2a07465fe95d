"""fp32 matmul of torch tensors with examples/kernels/matmul.cu, naive and tiled."""
import os

import torch

import nanocuda

HERE = os.path.dirname(os.path.abspath(__file__))
mod = nanocuda.load(os.path.join(HERE, "matmul.cu"))


def matmul(a: torch.Tensor, b: torch.Tensor, tiled: bool = True) -> torch.Tensor:
    """a (M×K) @ b (K×N), both contiguous float32 on the GPU."""
    (m, k), (k2, n) = a.shape, b.shape
    assert k == k2 and a.is_contiguous() and b.is_contiguous()
    c = torch.empty(m, n, device=a.device, dtype=torch.float32)
    kernel = mod.matmul_tiled if tiled else mod.matmul_naive
    kernel(a, b, c, m, n, k, grid=((n + 15) // 16, (m + 15) // 16), block=(16, 16))
    return c


if __name__ == "__main__":
    a, b = torch.randn(300, 200, device="cuda"), torch.randn(200, 400, device="cuda")
    for tiled in (False, True):
        torch.testing.assert_close(matmul(a, b, tiled), a @ b, rtol=1e-4, atol=1e-4)
    print("matmul: naive and tiled correct at 300x200 @ 200x400")
