"""Fast Hopper GEMM (fp16 or bf16, fp32 accumulate) from hopper_gemm_fast.cu: C = A·Bᵀ or A·B.

A is M×K, C is M×N in A's dtype, and B is N×K (`b_layout="nk"`, the default, like nn.Linear's
weight: C = A·Bᵀ) or K×N (`b_layout="kn"`: C = A·B, as torch.matmul(a, b)). Any M, N, K;
K (and, for a K×N B, N) is padded to a multiple of 8 with a copy when it is not one (TMA needs
16-byte row pitches). Each HopperGemm is one compiled configuration (the .cu file's -D knobs):

    HopperGemm()                         128×256 tiles, 4 stages, stores from registers
    HopperGemm(b_layout="kn")            the same for C = A·B
    HopperGemm(cluster=2)                2-block clusters sharing (multicasting) the B tile
    HopperGemm(tma_store=True)           C staged through shared memory, TMA stores
    HopperGemm(bn=128, stages=6)         128×128 tiles
VARIANTS names the combinations that scripts/gemm-gpu times.
"""
import os

import torch

import nanocuda

HERE = os.path.dirname(os.path.abspath(__file__))
BM, BK, THREADS = 128, 64, 384  # fixed in hopper_gemm_fast.cu
C_STAGE_BYTES = 2 * 2 * 64 * 64 * 2  # GEMM_TMA_STORE: two 64×64 buffers per consumer warpgroup
KERNELS = {torch.float16: "hopper_gemm_f16", torch.bfloat16: "hopper_gemm_bf16"}
# The variants scripts/gemm-gpu checks and times (HopperGemm keyword arguments; b_layout apart).
VARIANTS = {
    "base": {},
    "cluster2": {"cluster": 2},
    "tma_store": {"tma_store": True},
    "cluster2_tma_store": {"cluster": 2, "tma_store": True},
    # the shape chooser's candidates (all with TMA stores): N tile 256 / 192 / 128, cluster 1 / 2
    "bn192": {"bn": 192, "tma_store": True},
    "bn192_c2": {"bn": 192, "cluster": 2, "tma_store": True},
    "bn128": {"bn": 128, "tma_store": True},
    "bn128_c2": {"bn": 128, "cluster": 2, "tma_store": True},
}


class HopperGemm:
    """One compiled configuration: N tile (128 or 256), ring depth, tile grouping, B layout,
    cluster size (1, or 2 with B multicast) and epilogue (registers, or TMA stores)."""

    def __init__(self, bn: int = 256, stages: int | None = None, group_m: int = 8, l2_promotion=None, *,
                 b_layout: str = "nk", cluster: int = 1, tma_store: bool = False):
        if bn not in (128, 192, 256):
            raise ValueError(f"HopperGemm: bn must be 128, 192 or 256, got {bn}")
        if b_layout not in ("nk", "kn"):
            raise ValueError(f"HopperGemm: b_layout must be 'nk' (B is N×K, C = A·Bᵀ) or 'kn' (B is K×N, "
                             f"C = A·B), got {b_layout!r}")
        if cluster not in (1, 2):
            raise ValueError(f"HopperGemm: cluster must be 1 or 2, got {cluster}")
        if b_layout == "kn" and (bn // 64) % cluster:
            raise ValueError(f"HopperGemm: a K×N B tile of {bn} columns does not split into whole 64-column "
                             f"boxes between {cluster} clustered blocks")
        if group_m % cluster:
            raise ValueError(f"HopperGemm: group_m ({group_m}) must be a multiple of cluster ({cluster})")
        self.bn, self.l2, self.b_layout, self.cluster, self.tma_store = bn, l2_promotion, b_layout, cluster, tma_store
        self.stages = stages or (6 if bn == 128 else 4)
        self.defines = {"GEMM_BN": bn, "GEMM_STAGES": self.stages, "GEMM_GROUP_M": group_m,
                        "GEMM_B_KN": int(b_layout == "kn"), "GEMM_CLUSTER": cluster}
        self.modules = {}  # (dtype, tma_store) -> module with that dtype's kernel only (half the compile)
        self.launchers = {}  # (dtype, tma_store, grid) -> bound Launcher
        self.clusters = {}  # (dtype, tma_store) -> co-resident clusters
        self.sms = nanocuda.Device(0).multiprocessor_count

    def smem(self, tma_store: bool) -> int:
        """Dynamic shared memory: the ring, the C staging buffers, alignment slack and barriers."""
        return self.stages * (BM + self.bn) * BK * 2 + (C_STAGE_BYTES if tma_store else 0) + 1024 + 256

    def kernel(self, dtype, tma_store: bool | None = None):
        """The compiled kernel for fp16 or bf16 (compiled on first use, then cached). The TMA-store
        configuration also keeps a register-store module for outputs TMA cannot address."""
        tma = self.tma_store if tma_store is None else tma_store
        key = (dtype, tma)
        if key not in self.modules:
            only = "GEMM_ONLY_F16" if dtype == torch.float16 else "GEMM_ONLY_BF16"
            self.modules[key] = nanocuda.load(os.path.join(HERE, "hopper_gemm_fast.cu"), arch="sm_90a",
                                              defines={**self.defines, "GEMM_TMA_STORE": int(tma), only: None})
        return getattr(self.modules[key], KERNELS[dtype])

    def tensor_maps(self, a, b):
        """TMA descriptors for A and B with 128B swizzle: boxes 128 bytes wide along the
        contiguous dimension (64 K-elements; 64 N-elements for a K×N B); a cluster's block
        loads half of the N×K B tile."""
        a_map = nanocuda.TensorMap.tiled(a, (BM, BK), swizzle="128B", l2_promotion=self.l2)
        box = (BK, 64) if self.b_layout == "kn" else (self.bn // self.cluster, BK)
        return a_map, nanocuda.TensorMap.tiled(b, box, swizzle="128B", l2_promotion=self.l2)

    def max_clusters(self, dtype, tma: bool) -> int:
        """2-block clusters that fit on the device at once (GPCs may leave SMs unpaired)."""
        key = (dtype, tma)
        if key not in self.clusters:
            kernel, smem = self.kernel(dtype, tma).kernel, self.smem(tma)
            try:
                kernel.set_max_dynamic_shared_memory(smem)
                n = kernel.occupancy.max_active_clusters((self.sms // 2, 1, 1), (THREADS, 1, 1), (2, 1, 1),
                                                         dynamic_shared_memory=smem)
            except nanocuda.NanocudaError:  # an old driver without the query: assume SM pairs
                n = 0
            self.clusters[key] = n if n > 0 else self.sms // 2
        return self.clusters[key]

    def grid(self, m: int, n: int, dtype=torch.float16, tma: bool | None = None) -> int:
        """Persistent grid: one block per SM (one cluster per SM pair), fewer when there are
        fewer tiles."""
        tiles_m, tiles_n = -(-m // BM), -(-n // self.bn)
        if self.cluster == 1:
            return min(tiles_m * tiles_n, self.sms)
        tma = self.tma_store if tma is None else tma
        return 2 * min(-(-tiles_m // 2) * tiles_n, self.max_clusters(dtype, tma))

    def launcher(self, dtype, tma: bool, grid: int):
        key = (dtype, tma, grid)
        if key not in self.launchers:
            # `grid` is in blocks; with a cluster, LaunchConfig counts clusters
            config = nanocuda.LaunchConfig(grid=grid // self.cluster, block=THREADS, shared_mem=self.smem(tma),
                                           cluster=self.cluster if self.cluster > 1 else None)
            self.launchers[key] = self.kernel(dtype, tma).bind(config)
        launch = self.launchers[key]
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


_defaults: dict[tuple[str, int], HopperGemm] = {}


def default_gemm(b_layout: str, a: torch.Tensor) -> HopperGemm:
    """The fastest variant measured on the H100 (NOTES-hopper-gemm.md, 2026-11-23): TMA stores
    always; 2-block clusters sharing B when A's rows are not 128-byte aligned (odd K: each TMA
    row spans two lines, so halving B's traffic pays; aligned shapes run as fast without)."""
    cluster = 1 if (a.shape[-1] * a.element_size()) % 128 == 0 else 2
    key = (b_layout, cluster)
    if key not in _defaults:
        _defaults[key] = HopperGemm(b_layout=b_layout, cluster=cluster, tma_store=True)
    return _defaults[key]


def gemm(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """a (M×K) @ b (N×K)ᵀ with the default 128×256 tiles; fp16 or bf16, result in that dtype."""
    return default_gemm("nk", a)(a, b, out)


def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """a (M×K) @ b (K×N) with the default 128×256 tiles; fp16 or bf16, result in that dtype."""
    return default_gemm("kn", a)(a, b, out)


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
