"""Fast Hopper GEMM (fp16 or bf16, fp32 accumulate) from hopper_gemm_fast.cu: C = A·Bᵀ or A·B.

A is M×K, C is M×N in A's dtype, and B is N×K (`b_layout="nk"`, the default, like nn.Linear's
weight: C = A·Bᵀ) or K×N (`b_layout="kn"`: C = A·B, as torch.matmul(a, b)). Any M, N, K;
K (and, for a K×N B, N) is padded to a multiple of 8 with a copy when it is not one (TMA needs
16-byte row pitches). Each HopperGemm is one compiled configuration (the .cu file's -D knobs):

    HopperGemm()                         128×256 tiles, 4 stages, stores from registers
    HopperGemm(b_layout="kn")            the same for C = A·B
    HopperGemm(cluster=2)                2-block clusters sharing (multicasting) the B tile (or 4)
    HopperGemm(tma_store=True)           C staged through shared memory, TMA stores
    HopperGemm(bn=192) / (bn=128)        128×192 / 128×128 tiles (4 / 6 stages)
    HopperGemm(c_bufs=1, stages=5)       one C staging buffer per consumer, room for a fifth stage
    HopperGemm(tma_store=True, defer=True)  each tile's stores issued under the next tile's wgmma
    HopperGemm(tma_store=True, l2_hints=1)  C stored evict_first in L2 (2: A, B loaded evict_last too)
VARIANTS names the combinations that scripts/gemm-gpu times. gemm() and matmul() pick a
configuration per shape (hopper_gemm_plan.choose) and cache each prepared launch, so a repeated
call costs a plan lookup and one launch (hopper_gemm_plan.Plans).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper_gemm_plan import (BM, BK, CANDIDATES, DEFER, GROUP_M, GROUP_M_DTYPE, SWEEP_EXTRAS,  # noqa: E402,F401
                              THREADS, Config, Plans, choose)  # noqa: F401

sys.path.pop(0)

import nanocuda  # noqa: E402

KERNELS = {torch.float16: "hopper_gemm_f16", torch.bfloat16: "hopper_gemm_bf16"}
NAMES = {torch.float16: "float16", torch.bfloat16: "bfloat16"}
# The variants scripts/gemm-gpu checks and times (HopperGemm keyword arguments; b_layout apart).
VARIANTS = {
    "base": {},
    "cluster2": {"cluster": 2},
    "tma_store": {"tma_store": True},
    "cluster2_tma_store": {"cluster": 2, "tma_store": True},
    # the shape chooser's other candidates (all with TMA stores): N tile 192 / 128, cluster 1 / 2
    "bn192": {"bn": 192, "tma_store": True},
    "bn192_c2": {"bn": 192, "cluster": 2, "tma_store": True},
    "bn128": {"bn": 128, "tma_store": True},
    "bn128_c2": {"bn": 128, "cluster": 2, "tma_store": True},
    "bn192_c2_g16": {"bn": 192, "cluster": 2, "tma_store": True, "group_m": 16},  # what gemm() builds
    "bn192_c4": {"bn": 192, "cluster": 4, "tma_store": True},  # 4-block clusters: B read once per 4 tiles
    # one C staging buffer per consumer (c_bufs=1), which leaves room for a fifth stage
    "bn192_c2_g16_cb1": {"bn": 192, "cluster": 2, "tma_store": True, "group_m": 16, "c_bufs": 1},
    "bn192_c2_g16_s5": {"bn": 192, "cluster": 2, "tma_store": True, "group_m": 16, "stages": 5, "c_bufs": 1},
    "bn256_c4": {"bn": 256, "cluster": 4, "tma_store": True},
    # the deferred epilogue: a tile's TMA stores issued under the next tile's first wgmma groups
    "bn192_c2_df": {"bn": 192, "cluster": 2, "tma_store": True, "group_m": 16, "defer": True},
    "bn192_df": {"bn": 192, "tma_store": True, "defer": True},
    "bn256_df": {"bn": 256, "tma_store": True, "defer": True},
    # L2 hints: C stored evict_first (h1), and A, B loaded evict_last too (h2)
    "bn192_c2_h2": {"bn": 192, "cluster": 2, "tma_store": True, "group_m": 16, "l2_hints": 2},
    "bn256_h1": {"bn": 256, "tma_store": True, "l2_hints": 1},
}


class HopperGemm(Config):
    """One compiled configuration (hopper_gemm_plan.Config) applied to torch tensors: checks,
    pads and launches on torch's current stream."""

    def tensor_maps(self, a, b):
        """TMA descriptors for A and B with 128B swizzle: boxes 128 bytes wide along the
        contiguous dimension (64 K-elements; 64 N-elements for a K×N B); a cluster's block
        loads half of the N×K B tile."""
        a_map = nanocuda.TensorMap.tiled(a, (BM, BK), swizzle="128B", l2_promotion=self.l2)
        box = (BK, 64) if self.b_layout == "kn" else (self.bn // self.cluster, BK)
        return a_map, nanocuda.TensorMap.tiled(b, box, swizzle="128B", l2_promotion=self.l2)

    def launcher(self, dtype, tma: bool, grid: int):
        launch = self.bound(dtype, tma, grid)
        return lambda *args: launch(*args, stream=nanocuda.workflow.default_stream())

    def prepare(self, a, b, out=None):
        """Checks and pads the operands; returns (launch callable, c), e.g. for timing loops."""
        kn = self.b_layout == "kn"
        if a.dim() != 2 or b.dim() != 2:
            raise ValueError(f"gemm: a and b must be matrices, got {a.dim()}-d and {b.dim()}-d")
        (m, k), (n, k2) = a.shape, (tuple(reversed(b.shape)) if kn else b.shape)
        if k != k2 or a.dtype != b.dtype or a.dtype not in KERNELS:
            raise ValueError(f"gemm: a {tuple(a.shape)} {a.dtype} and b {tuple(b.shape)} {b.dtype} "
                             f"must share K (b is {'K×N' if kn else 'N×K'}) and be both fp16 or both bf16")
        c = out if out is not None else torch.empty(m, n, device=a.device, dtype=a.dtype)
        if tuple(c.shape) != (m, n) or c.dtype != a.dtype or not c.is_contiguous():
            raise ValueError(f"gemm: out must be a contiguous {m}×{n} {a.dtype} tensor, got "
                             f"{tuple(c.shape)} {c.dtype}{'' if c.is_contiguous() else ' (not contiguous)'}")
        if k == 0 or m == 0 or n == 0:
            return (lambda: c.zero_()), c
        if k % 8:  # pad K with zeros: they add nothing to the dot products
            pad = 8 - k % 8
            a = torch.nn.functional.pad(a, (0, pad))
            if not kn:  # (a K×N B's missing rows read as zeros: TMA's out-of-bounds fill)
                b = torch.nn.functional.pad(b, (0, pad))
            k += pad
        if kn and n % 8:  # a 16-byte row pitch for B's map; C keeps its n columns
            b = torch.nn.functional.pad(b, (0, 8 - n % 8))
        a, b = a.contiguous(), b.contiguous()
        # TMA stores need C's row pitch and start 16-byte aligned; otherwise stores from registers.
        tma = self.tma_store and n % 8 == 0 and c.data_ptr() % 16 == 0
        maps = self.tensor_maps(a, b)
        c_arg = nanocuda.TensorMap.tiled(c, (64, 64), swizzle="128B") if tma else c
        launch = self.launcher(a.dtype, tma, self.grid(m, n, a.dtype, tma))
        return (lambda: launch(*maps, c_arg, m, n, k)), c

    def __call__(self, a, b, out=None):
        launch, c = self.prepare(a, b, out)
        launch()
        return c


_plans = Plans(HopperGemm)  # gemm()/matmul()'s configurations, shape choices and prepared launches
_streams: dict[tuple[int, int], nanocuda.Stream] = {}
# torch's current raw stream handle without building a torch Stream object (~0.2 µs, not ~2)
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def current_stream(device: int) -> nanocuda.Stream:
    """torch's current stream on `device` as a nanocuda Stream (adopted once per handle)."""
    handle = _raw_stream(device) if _raw_stream else torch.cuda.current_stream(device).cuda_stream
    stream = _streams.get((handle, device))
    if stream is None:
        stream = _streams[(handle, device)] = (nanocuda.Stream.from_handle(handle, device) if handle
                                               else nanocuda.Stream.legacy(nanocuda.Device(device)))
    return stream


def default_gemm(b_layout: str, a: torch.Tensor, b: torch.Tensor | None = None) -> HopperGemm:
    """The configuration gemm()/matmul() choose for these operands (hopper_gemm_plan.choose: the
    N tile and cluster by waves × tile cost; TMA stores always). Without b, N is taken as M."""
    if a.dim() != 2 or (b is not None and b.dim() != 2):
        return _plans.config(b_layout, 1, 1, 64)  # any one: its prepare() names the bad shapes
    m, k = a.shape
    n = m if b is None else (b.shape[1] if b_layout == "kn" else b.shape[0])
    return _plans.config(b_layout, m, n, k + (-k % 8))


def _run(b_layout: str, a, b, out):
    """The cached path for the common case (contiguous CUDA operands, 16-byte aligned, K and a
    K×N B's N multiples of 8): one plan lookup and one launch; anything else (and every error)
    goes through HopperGemm.prepare, which pads, copies and checks. Every torch call here costs
    the burst's first launch its time (NOTES-hopper-gemm.md: gemm() against its prepared launch),
    so each property is read once and a fresh output is allocated with new_empty, unchecked."""
    dt = a.dtype
    name = NAMES.get(dt)
    sa, sb = a.shape, b.shape
    if (name is not None and len(sa) == 2 and len(sb) == 2 and b.dtype == dt and a.is_cuda and b.is_cuda
            and a.is_contiguous() and b.is_contiguous()):
        m, k = sa
        k2, n = sb if b_layout == "kn" else (sb[1], sb[0])
        a_ptr, b_ptr = a.data_ptr(), b.data_ptr()
        if (k == k2 and m and n and k and k % 8 == 0 and not (b_layout == "kn" and n % 8) and a_ptr % 16 == 0
                and b_ptr % 16 == 0):
            if out is None:
                c = a.new_empty((m, n))  # a's dtype and device, contiguous
            elif out.dtype == dt and out.is_cuda and out.is_contiguous() and out.shape == (m, n):
                c = out
            else:
                return default_gemm(b_layout, a, b)(a, b, out)  # prepare() names what is wrong with out
            _plans.launch(b_layout, name, m, n, k, a_ptr, b_ptr, c.data_ptr(), current_stream(a.get_device()))
            return c
    return default_gemm(b_layout, a, b)(a, b, out)


def gemm(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """a (M×K) @ b (N×K)ᵀ with the configuration chosen for the shape; fp16 or bf16, result in
    that dtype, on torch's current stream."""
    return _run("nk", a, b, out)


def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """a (M×K) @ b (K×N) with the configuration chosen for the shape; fp16 or bf16, result in
    that dtype, on torch's current stream."""
    return _run("kn", a, b, out)


if __name__ == "__main__":
    for dtype in (torch.float16, torch.bfloat16):
        for m, n, k in ((512, 512, 512), (256, 512, 384), (200, 136, 72), (1000, 333, 100)):
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            for name, b, f in (("A·Bᵀ", torch.randn(n, k, device="cuda", dtype=dtype), gemm),
                               ("A·B", torch.randn(k, n, device="cuda", dtype=dtype), matmul)):
                ref = a.double() @ (b.double().T if f is gemm else b.double())
                c = f(a, b)
                err = ((c.double() - ref).norm() / ref.norm()).item()
                assert err < 1e-2, f"{name} {m}x{n}x{k} {dtype}: relative error {err}"
                print(f"hopper_gemm_fast: {name} {m}x{n}x{k} {dtype} correct (relative error {err:.1e})")
