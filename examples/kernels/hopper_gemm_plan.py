"""hopper_gemm_fast.cu's host side without torch: configurations, the shape chooser, cached launches.

run_hopper_gemm_fast.py wraps this for torch tensors; everything here works on device pointers,
so the chooser and the per-call host path run (and are tested) on the mock driver too.

- Config: one compiled configuration (the .cu file's -D knobs), its launch geometry and maps.
- choose(m, n, k, ...): the N tile and cluster for a shape, from a cost model of waves × tile
  time (NOTES-hopper-gemm.md has the H100 sweep behind TILE_COST).
- Plans: the host path of gemm()/matmul(): per (layout, dtype, shape, pointers) the bound
  Launcher and its encoded arguments, built once; a repeated call is one dict lookup and one
  launch. The tensor maps hold addresses and shapes only, so a cached plan stays right for any
  buffer that lands at the same address with the same shape (as torch's caching allocator does).
"""
import os

import nanocuda

HERE = os.path.dirname(os.path.abspath(__file__))
BM, BK, THREADS = 128, 64, 384  # fixed in hopper_gemm_fast.cu
C_STAGE_BYTES = 2 * 64 * 64 * 2  # GEMM_TMA_STORE: one 64×64 buffer per consumer warpgroup (× c_bufs)
KERNELS = {"float16": "hopper_gemm_f16", "bfloat16": "hopper_gemm_bf16"}
# Relative time of one 128×BN tile per output column against BN = 256, fitted on the H100 sweep
# (NOTES-hopper-gemm.md): at 8192³ 128×192 tiles run as fast per column as 128×256 ones, 128×128
# ones 10% slower (A is reloaded twice as often per output).
TILE_COST = {256: 1.00, 192: 1.00, 128: 1.10}
CANDIDATES = ((256, 1), (256, 2), (192, 1), (192, 2), (128, 1), (128, 2))  # (bn, cluster)
# Tile-row grouping per candidate where the sweep preferred another than 8: 192 c2 gained
# 0.8-1.2% at 3072×3072×3000 A·Bᵀ with 16 in both H100 runs, and was neutral (±1%) elsewhere.
GROUP_M = {(192, 2): 16}
# Overrides by (layout, bn, cluster, dtype) where one dtype preferred another grouping: bf16 A·Bᵀ at
# 192 c2 (3072×3072×3000) gained 1.3%, 1.7% and 1.7% with all tile-rows in one group (24) in three H100
# runs (137466a, 1f22827, c35601c); fp16 moved -1.1%, -0.4%, +0.5% (kept at 16).
GROUP_M_DTYPE: dict[tuple, int] = {("nk", 192, 2, "bfloat16"): 24}
# (bn, cluster) candidates whose epilogue is deferred under the next tile's wgmma (GEMM_DEFER_EPILOGUE).
DEFER: set[tuple[int, int]] = set()
# Extra configurations `nanocuda bench gemm_shapes --sweep` times beside CANDIDATES (kwargs).
# (4-block clusters lost everywhere in the H100 sweep, 0.6-0.99×; kept as a switch, not a candidate.)
# (H100, 73d7b62, against bn192_c2 per cell: one C buffer a consumer 0.97-1.01×, and with it a fifth
# stage at BN = 192 0.89-0.97×: c_bufs=1 stays a switch.) Tried at 3072×3072×3000 A·Bᵀ next: all tile-rows in one
# group, and no L2 promotion (every 128-byte box row of a 6000-byte pitch spans two lines).
# (H100, 1f22827: no L2 promotion 0.98×, dropped.) H100, c35601c and 8b49167, against the same
# configuration without the switch: the deferred epilogue (defer=True) 0.99-1.02× at 4096³ and
# 8192³, 1.00× at 3072×3072×3000, 0.95-0.96× at 3000×5000×2048; L2 eviction hints (l2_hints=1: C
# stored evict_first, 2: A and B loaded evict_last too) within ±0.01 in every cell; 256-byte L2
# promotion 0.80-0.93× wherever a row is unaligned. Switches, not candidates (DEFER stays empty).
SWEEP_EXTRAS = {
    "bn192_c2_g24": {"bn": 192, "cluster": 2, "tma_store": True, "group_m": 24},
}


def dtype_name(dtype) -> str:
    """'float16' / 'bfloat16' from a name or a torch / numpy dtype."""
    name = str(dtype).removeprefix("torch.")
    if name not in KERNELS:
        raise ValueError(f"hopper_gemm: dtype must be float16 or bfloat16, got {dtype}")
    return name


class Config:
    """One compiled configuration: N tile (128, 192 or 256), ring depth, tile grouping (an int, or
    {dtype name: int} for a grouping per dtype, 8 where missing), B layout, cluster size (1, or 2
    with B multicast) and epilogue (registers, or TMA stores; `defer`: TMA stores issued under the
    next tile's first wgmma groups)."""

    def __init__(self, bn: int = 256, stages: int | None = None, group_m: int | dict = 8, l2_promotion=None, *,
                 b_layout: str = "nk", cluster: int = 1, tma_store: bool = False, sms: int | None = None,
                 c_bufs: int = 2, defer: bool = False, l2_hints: int = 0):
        if bn not in (128, 192, 256):
            raise ValueError(f"HopperGemm: bn must be 128, 192 or 256, got {bn}")
        if b_layout not in ("nk", "kn"):
            raise ValueError(f"HopperGemm: b_layout must be 'nk' (B is N×K, C = A·Bᵀ) or 'kn' (B is K×N, "
                             f"C = A·B), got {b_layout!r}")
        if cluster not in (1, 2, 4):
            raise ValueError(f"HopperGemm: cluster must be 1, 2 or 4, got {cluster}")
        if c_bufs not in (1, 2):
            raise ValueError(f"HopperGemm: c_bufs must be 1 or 2, got {c_bufs}")
        groups = {name: group_m.get(name, 8) for name in KERNELS} if isinstance(group_m, dict) else \
            dict.fromkeys(KERNELS, group_m)
        for g in groups.values():
            if g % cluster:
                raise ValueError(f"HopperGemm: group_m ({g}) must be a multiple of cluster ({cluster})")
        if l2_hints not in (0, 1, 2):
            raise ValueError(f"HopperGemm: l2_hints must be 0, 1 (C evict_first) or 2 (and A, B evict_last), "
                             f"got {l2_hints}")
        if defer and not tma_store:
            raise ValueError("HopperGemm: defer=True needs tma_store=True (it defers the TMA stores)")
        self.bn, self.l2, self.b_layout, self.cluster, self.tma_store = bn, l2_promotion, b_layout, cluster, tma_store
        self.group_m, self.groups, self.c_bufs, self.defer = group_m, groups, c_bufs, defer
        self.stages = stages or (6 if bn == 128 else 4)
        # float16's grouping; kernel() compiles each dtype with its own (self.groups)
        self.defines = {"GEMM_BN": bn, "GEMM_STAGES": self.stages, "GEMM_GROUP_M": groups["float16"],
                        "GEMM_B_KN": int(b_layout == "kn"), "GEMM_CLUSTER": cluster, "GEMM_C_BUFS": c_bufs,
                        "GEMM_L2_HINTS": l2_hints}
        self.modules = {}  # (dtype name, tma_store) -> module with that dtype's kernel only (half the compile)
        self.launchers = {}  # (dtype name, tma_store, grid) -> bound Launcher
        self.clusters = {}  # (dtype name, tma_store) -> co-resident clusters
        self.sms = sms or nanocuda.Device(0).multiprocessor_count

    def __repr__(self) -> str:
        return (f"HopperGemm(bn={self.bn}, stages={self.stages}, group_m={self.group_m}, "
                f"b_layout={self.b_layout!r}, cluster={self.cluster}, tma_store={self.tma_store}"
                + (f", c_bufs={self.c_bufs}" if self.c_bufs != 2 else "") + (", defer=True" if self.defer else "")
                + (f", l2_hints={self.defines['GEMM_L2_HINTS']})" if self.defines["GEMM_L2_HINTS"] else ")"))

    def smem(self, tma_store: bool) -> int:
        """Dynamic shared memory: the ring, the C staging buffers, alignment slack and barriers."""
        return self.stages * (BM + self.bn) * BK * 2 + (C_STAGE_BYTES * self.c_bufs if tma_store else 0) + 1024 + 256

    def kernel(self, dtype, tma_store: bool | None = None):
        """The compiled kernel for fp16 or bf16 (compiled on first use, then cached). The TMA-store
        configuration also keeps a register-store module for outputs TMA cannot address."""
        tma = self.tma_store if tma_store is None else tma_store
        key = (dtype_name(dtype), tma)
        if key not in self.modules:
            only = "GEMM_ONLY_F16" if key[0] == "float16" else "GEMM_ONLY_BF16"
            defines = {**self.defines, "GEMM_GROUP_M": self.groups[key[0]], "GEMM_TMA_STORE": int(tma), only: None}
            if self.defer and tma:  # (the register-store module for outputs TMA cannot address: not deferred)
                defines["GEMM_DEFER_EPILOGUE"] = 1
            self.modules[key] = nanocuda.load(os.path.join(HERE, "hopper_gemm_fast.cu"), arch="sm_90a",
                                              defines=defines)
        return getattr(self.modules[key], KERNELS[key[0]])

    def max_clusters(self, dtype, tma: bool) -> int:
        """Clusters that fit on the device at once (GPCs may leave SMs unpaired)."""
        key = (dtype_name(dtype), tma)
        if key not in self.clusters:
            kernel, smem = self.kernel(dtype, tma).kernel, self.smem(tma)
            try:
                kernel.set_max_dynamic_shared_memory(smem)
                n = kernel.occupancy.max_active_clusters((self.sms // self.cluster, 1, 1), (THREADS, 1, 1),
                                                         (self.cluster, 1, 1), dynamic_shared_memory=smem)
            except nanocuda.NanocudaError:  # an old driver without the query: assume SM pairs
                n = 0
            self.clusters[key] = n if n > 0 else self.sms // self.cluster
        return self.clusters[key]

    def grid(self, m: int, n: int, dtype="float16", tma: bool | None = None) -> int:
        """Persistent grid: one block per SM (one cluster per SM pair), fewer when there are
        fewer tiles."""
        tiles_m, tiles_n = -(-m // BM), -(-n // self.bn)
        if self.cluster == 1:
            return min(tiles_m * tiles_n, self.sms)
        tma = self.tma_store if tma is None else tma
        c = self.cluster
        return c * min(-(-tiles_m // c) * tiles_n, self.max_clusters(dtype, tma))

    def bound(self, dtype, tma: bool, grid: int):
        """The Launcher for this grid (`grid` in blocks; with a cluster, LaunchConfig counts clusters)."""
        key = (dtype_name(dtype), tma, grid)
        if key not in self.launchers:
            config = nanocuda.LaunchConfig(grid=grid // self.cluster, block=THREADS, shared_mem=self.smem(tma),
                                           cluster=self.cluster if self.cluster > 1 else None)
            self.launchers[key] = self.kernel(dtype, tma).bind(config)
        return self.launchers[key]

    def maps_from_pointers(self, dtype, a_ptr: int, b_ptr: int, m: int, n: int, k: int):
        """TMA descriptors of a contiguous M×K A and B (N×K, or K×N) with 128B swizzle: boxes
        128 bytes wide along the contiguous dimension; a cluster's block loads half the N×K B tile."""
        name = dtype_name(dtype)
        tiled = nanocuda.TensorMap.tiled_from_pointer
        a_map = tiled(a_ptr, name, (m, k), box=(BM, BK), swizzle="128B", l2_promotion=self.l2)
        if self.b_layout == "kn":
            b_map = tiled(b_ptr, name, (k, n), box=(BK, 64), swizzle="128B", l2_promotion=self.l2)
        else:
            b_map = tiled(b_ptr, name, (n, k), box=(self.bn // self.cluster, BK), swizzle="128B",
                          l2_promotion=self.l2)
        return a_map, b_map

    def arguments(self, dtype, a_ptr: int, b_ptr: int, c_ptr: int, m: int, n: int, k: int):
        """(Launcher, kernel arguments) for contiguous operands with K (and a K×N B's N) a
        multiple of 8: C through a TMA map when its pitch and start allow, else its pointer."""
        tma = self.tma_store and n % 8 == 0 and c_ptr % 16 == 0
        maps = self.maps_from_pointers(dtype, a_ptr, b_ptr, m, n, k)
        c_arg = (nanocuda.TensorMap.tiled_from_pointer(c_ptr, dtype_name(dtype), (m, n), box=(64, 64),
                                                       swizzle="128B") if tma else c_ptr)
        return self.bound(dtype, tma, self.grid(m, n, dtype, tma)), (*maps, c_arg, m, n, k)


def waves(m: int, n: int, bn: int, cluster: int, sms: int) -> int:
    """Rounds of the persistent grid: work units (tiles, or a cluster's tile pairs) over slots."""
    tiles_m, tiles_n = -(-m // BM), -(-n // bn)
    units = -(-tiles_m // cluster) * tiles_n
    return -(-units // (sms // cluster))


def cost(m: int, n: int, k: int, bn: int, cluster: int, sms: int) -> float:
    """Model time in units of one 128×256 tile: rounds × the time of one block's tile (a
    cluster's two blocks work side by side). K cancels: every candidate walks all of K per tile."""
    return waves(m, n, bn, cluster, sms) * bn / 256 * TILE_COST[bn]


def b_rows_unaligned(n: int, k: int, b_layout: str, elem: int = 2) -> bool:
    """B's rows (K long for an N×K B, N long for a K×N one) are not a multiple of 128 bytes."""
    return ((k if b_layout == "nk" else n) * elem) % 128 != 0


def choose(m: int, n: int, k: int, b_layout: str, sms: int, elem: int = 2) -> tuple[int, int]:
    """(bn, cluster) of the cheapest candidate by `cost`; ties go to the earlier (wider) tile.
    The cluster follows B's alignment: measured on the H100, 2-block clusters (each B tile read
    once per pair, multicast) win 5-30% where B's rows are not 128-byte aligned (every TMA row
    spans two lines) and lose up to 6% where they are."""
    cluster = 2 if b_rows_unaligned(n, k, b_layout, elem) else 1
    best, best_cost = (256, cluster), None
    for bn, c in CANDIDATES:
        if c != cluster:
            continue
        t = cost(m, n, k, bn, c, sms)
        if best_cost is None or t < best_cost - 1e-9:
            best, best_cost = (bn, c), t
    return best


class Plans:
    """The cached host path: configurations by (layout, bn, cluster), choices by shape, and
    prepared launches by (layout, dtype, shape, pointers), each bounded."""

    LIMIT = 256  # prepared launches kept (each ~400 bytes of maps); cleared whole when full

    def __init__(self, factory=Config):
        self.factory = factory  # Config, or a subclass (run_hopper_gemm_fast.HopperGemm)
        self.configs: dict[tuple, Config] = {}
        self.prepared: dict[tuple, tuple] = {}
        self.sms = None

    def config(self, b_layout: str, m: int, n: int, k: int) -> Config:
        """The chosen configuration for a shape (compiled on first launch)."""
        if self.sms is None:
            self.sms = nanocuda.Device(0).multiprocessor_count
        bn, cluster = choose(m, n, k, b_layout, self.sms)
        key = (b_layout, bn, cluster)
        g = self.configs.get(key)
        if g is None:
            group = GROUP_M.get((bn, cluster), 8)
            groups = {name: GROUP_M_DTYPE.get((b_layout, bn, cluster, name), group) for name in KERNELS}
            g = self.configs[key] = self.factory(bn, group_m=groups if len(set(groups.values())) > 1 else group,
                                                 b_layout=b_layout, cluster=cluster, tma_store=True, sms=self.sms,
                                                 defer=(bn, cluster) in DEFER)
        return g

    def launch(self, b_layout: str, dtype: str, m: int, n: int, k: int, a_ptr: int, b_ptr: int,
               c_ptr: int, stream) -> None:
        """One GEMM on `stream` (anything a Launcher takes): contiguous operands, K % 8 == 0 (and
        N % 8 == 0 for a K×N B), nonzero sizes; run_hopper_gemm_fast checks that."""
        key = (b_layout, dtype, m, n, k, a_ptr, b_ptr, c_ptr)
        p = self.prepared.get(key)
        if p is None:
            if len(self.prepared) >= self.LIMIT:
                self.prepared.clear()
            p = self.prepared[key] = self.config(b_layout, m, n, k).arguments(dtype, a_ptr, b_ptr, c_ptr, m, n, k)
        p[0](*p[1], stream=stream)
