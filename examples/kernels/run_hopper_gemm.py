"""fp16 GEMM C = A·Bᵀ on Hopper (sm_90a) with A, B, C passed as TMA tensor maps by value."""
import os

import torch

import nanocuda

HERE = os.path.dirname(os.path.abspath(__file__))
TILE = 64  # the kernel's BM = BN = BK
mod = nanocuda.load(os.path.join(HERE, "hopper_gemm.cu"), arch="sm_90a")


def tensor_maps(a, b, c):
    """The three descriptors; swizzle "none" because the kernel reads plain row-major tiles."""
    box = (TILE, TILE)
    return tuple(nanocuda.TensorMap.tiled(t, box, swizzle="none") for t in (a, b, c))


def gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a (M×K) @ b (N×K)ᵀ in fp16; K and N must be multiples of 8 (TMA's 16-byte pitch)."""
    (m, k), (n, k2) = a.shape, b.shape
    assert k == k2 and k % 8 == 0 and n % 8 == 0
    c = torch.empty(m, n, device=a.device, dtype=torch.float16)
    mod.hopper_gemm[((n + TILE - 1) // TILE, (m + TILE - 1) // TILE), 128](*tensor_maps(a, b, c), k)
    return c


if __name__ == "__main__":
    for m, n, k in ((512, 512, 512), (256, 512, 384), (200, 136, 72)):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(n, k, device="cuda", dtype=torch.float16)
        torch.testing.assert_close(gemm(a, b), (a.float() @ b.float().T).half(), rtol=1e-2, atol=1e-2)
        print(f"hopper_gemm: {m}x{n}x{k} correct")
