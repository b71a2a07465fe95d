"""Fast Hopper GEMM C = A·Bᵀ (fp16 or bf16, fp32 accumulate) from hopper_gemm_fast.cu.

A is M×K, B is N×K (row-major, like nn.Linear's weight), C is M×N in A's dtype. Any M, N, K;
K is padded to a multiple of 8 with a copy when it is not one (TMA needs 16-byte row pitches).
`HopperGemm(bn=128, stages=6)` compiles another tile shape (the .cu file's -D knobs).
"""
import os

import torch

import nanocuda

HERE = os.path.dirname(os.path.abspath(__file__))
BM, BK, THREADS = 128, 64, 384  # fixed in hopper_gemm_fast.cu
KERNELS = {torch.float16: "hopper_gemm_f16", torch.bfloat16: "hopper_gemm_bf16"}


class HopperGemm:
    """One compiled configuration: N tile (128 or 256), ring depth, tile grouping."""

    def __init__(self, bn: int = 256, stages: int | None = None, group_m: int = 8, l2_promotion=None):
        self.bn, self.l2 = bn, l2_promotion
        self.stages = stages or (4 if bn == 256 else 6)
        self.smem = self.stages * (BM + bn) * BK * 2 + 1024 + 256
        self.defines = {"GEMM_BN": bn, "GEMM_STAGES": self.stages, "GEMM_GROUP_M": group_m}
        self.modules = {}  # dtype -> module with that dtype's kernel only (half the compile)
        self.sms = nanocuda.Device(0).multiprocessor_count

    def kernel(self, dtype):
        """The compiled kernel for fp16 or bf16 (compiled on first use, then cached)."""
        if dtype not in self.modules:
            only = "GEMM_ONLY_F16" if dtype == torch.float16 else "GEMM_ONLY_BF16"
            self.modules[dtype] = nanocuda.load(os.path.join(HERE, "hopper_gemm_fast.cu"), arch="sm_90a",
                                                defines={**self.defines, only: None})
        return getattr(self.modules[dtype], KERNELS[dtype])

    def tensor_maps(self, a, b):
        """TMA descriptors for A and B: boxes of 64 K-elements (128 bytes), swizzled 128B."""
        return (nanocuda.TensorMap.tiled(a, (BM, BK), swizzle="128B", l2_promotion=self.l2),
                nanocuda.TensorMap.tiled(b, (self.bn, BK), swizzle="128B", l2_promotion=self.l2))

    def grid(self, m: int, n: int) -> int:
        """Persistent grid: one block per SM, or fewer when there are fewer tiles."""
        return min(-(-m // BM) * -(-n // self.bn), self.sms)

    def prepare(self, a, b, out=None):
        """Checks and pads the operands; returns (launch callable, c), e.g. for timing loops."""
        (m, k), (n, k2) = a.shape, b.shape
        if k != k2 or a.dtype != b.dtype or a.dtype not in KERNELS:
            raise ValueError(f"gemm: a {tuple(a.shape)} {a.dtype} and b {tuple(b.shape)} {b.dtype} "
                             "must share K and be both fp16 or both bf16")
        if k % 8:  # pad K with zeros: they add nothing to the dot products
            pad = 8 - k % 8
            a, b, k = torch.nn.functional.pad(a, (0, pad)), torch.nn.functional.pad(b, (0, pad)), k + pad
        a, b = a.contiguous(), b.contiguous()
        c = out if out is not None else torch.empty(m, n, device=a.device, dtype=a.dtype)
        if k == 0 or m == 0 or n == 0:
            return (lambda: c.zero_()), c
        maps = self.tensor_maps(a, b)
        launch = self.kernel(a.dtype)[self.grid(m, n), THREADS, self.smem]
        return (lambda: launch(*maps, c, m, n, k)), c

    def __call__(self, a, b, out=None):
        launch, c = self.prepare(a, b, out)
        launch()
        return c


_default: HopperGemm | None = None


def gemm(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """a (M×K) @ b (N×K)ᵀ with the default 128×256 tiles; fp16 or bf16, result in that dtype."""
    global _default
    if _default is None:
        _default = HopperGemm()
    return _default(a, b, out)


if __name__ == "__main__":
    for dtype in (torch.float16, torch.bfloat16):
        for m, n, k in ((512, 512, 512), (256, 512, 384), (200, 136, 72), (1000, 333, 100)):
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(n, k, device="cuda", dtype=dtype)
            ref = a.double() @ b.double().T
            c = gemm(a, b)
            err = ((c.double() - ref).norm() / ref.norm()).item()
            assert err < 1e-2, f"{m}x{n}x{k} {dtype}: relative error {err}"
            print(f"hopper_gemm_fast: {m}x{n}x{k} {dtype} correct (relative error {err:.1e})")
