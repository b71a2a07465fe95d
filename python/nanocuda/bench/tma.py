"""`nanocuda bench tma`: TMA descriptor creation (seed 001) and the seed-000 loop shape.

Workload: 3 descriptors per iteration, 512x512 fp16, box 64x64, 128B swizzle. Each path is
timed in bursts of iterations, interleaved with a native C++ loop built into the extension
(cuTensorMapEncodeTiled x3; and x3 + cuLaunchKernel of a kernel taking the 3 maps).

TensorMap.tiled remembers the last geometry and its descriptors for recent addresses (the
driver's bytes for the same arguments; see TiledMemo), so the seed workload, which re-encodes
the same 3 maps, mostly reuses them. Two extra rows defeat that on purpose and show the cost
of the other paths: new addresses (an address swap each) and a new geometry every call (a
full validation + driver encode each).
"""

from __future__ import annotations

from .harness import Variant, print_table, run_interleaved, summarize
from .launch import _loop

SOURCE = r"""
#include <nanocuda/device/tma.cuh>
extern "C" __global__ void take3(const __grid_constant__ CUtensorMap a,
                                 const __grid_constant__ CUtensorMap b,
                                 const __grid_constant__ CUtensorMap c) {}
"""

ENCODE = "C++ cuTensorMapEncodeTiled loop, 3 descriptors"
NAIVE = "C++ 3 encodes + cuLaunchKernel (naive)"
TARGETS = {
    "nanocuda TensorMap.tiled_from_pointer x3": 2.5,
    "nanocuda TensorMap.tiled(torch) x3": 6.0,
    "nanocuda 3x TensorMap.tiled(torch) + Launcher": 1.25,
    "nanocuda bound Launcher(a, b, c), new tensors each call": 1.10,
}
BRIDGE = " [torch bridge]"  # suffix of the rows reading tensors through nanocuda.torch_bridge


def _reading(bridge: bool, burst_fn):
    """The burst, run with torch tensors read through the bridge or through torch's DLPack
    exchange API (switched outside the timed region)."""
    from .. import torch_bridge

    def run() -> int:
        if bridge:
            torch_bridge.enable()
        else:
            torch_bridge.disable()
        return burst_fn()

    return run


def _three(fn, tensors):
    def f():
        fn(tensors[0])
        fn(tensors[1])
        fn(tensors[2])
    return f


def build_variants(burst: int, use_bridge: bool = True) -> tuple[list[Variant], list[str]]:
    import torch

    import nanocuda
    from nanocuda._nanocuda import _testing as core

    skipped: list[str] = []
    stream = nanocuda.Stream()
    ts = [torch.randn(512, 512, device="cuda").half() for _ in range(3)]
    ts2 = [torch.randn(512, 512, device="cuda").half() for _ in range(3)]  # same geometry
    torch.cuda.synchronize()
    a, b, c = (t.data_ptr() for t in ts)
    box = (64, 64)
    kernel = nanocuda.compile(SOURCE).get_kernel("take3")
    config = nanocuda.LaunchConfig(grid=1, block=32)
    launcher = kernel.bind(config, stream=stream)
    templates = {i: nanocuda.TensorMap.tiled(t, box, swizzle=128) for i, t in enumerate(ts)}
    bound = kernel.bind(config, stream=stream, tensor_maps=templates)
    tiled, from_ptr = nanocuda.TensorMap.tiled, nanocuda.TensorMap.tiled_from_pointer

    def encode_torch():
        tiled(ts[0], box, swizzle=128)
        tiled(ts[1], box, swizzle=128)
        tiled(ts[2], box, swizzle=128)

    def encode_ptr():
        from_ptr(a, "float16", (512, 512), box=box, swizzle=128)
        from_ptr(b, "float16", (512, 512), box=box, swizzle=128)
        from_ptr(c, "float16", (512, 512), box=box, swizzle=128)

    # The same call with what nanocuda remembers defeated, to show each path's cost:
    # 16 address triples in rotation (more than the 4 remembered): an address swap per map;
    # alternating shapes: every call a new geometry, so a full validate + driver encode.
    pool = torch.empty(600 * 512, dtype=torch.float16, device="cuda")
    triples = [tuple(pool.data_ptr() + 256 * (3 * k + j) for j in range(3)) for k in range(16)]

    def new_addresses_burst() -> int:
        import time

        clock = time.perf_counter_ns
        t0 = clock()
        for i in range(burst):
            x, y, z = triples[i & 15]
            from_ptr(x, "float16", (512, 512), box=box, swizzle=128)
            from_ptr(y, "float16", (512, 512), box=box, swizzle=128)
            from_ptr(z, "float16", (512, 512), box=box, swizzle=128)
        return clock() - t0

    def new_geometry():
        from_ptr(a, "float16", (512, 512), box=box, swizzle=128)
        from_ptr(b, "float16", (256, 512), box=box, swizzle=128)
        from_ptr(c, "float16", (512, 512), box=box, swizzle=128)

    def naive_python():
        launcher(tiled(ts[0], box, swizzle=128), tiled(ts[1], box, swizzle=128),
                 tiled(ts[2], box, swizzle=128))

    sets = [ts, ts2]

    def bound_alternating_burst() -> int:
        import time

        clock = time.perf_counter_ns
        t0 = clock()
        for i in range(burst):
            x, y, z = sets[i & 1]
            bound(x, y, z)
        return clock() - t0

    torch_rows = [
        ("nanocuda TensorMap.tiled(torch) x3", _loop(encode_torch, (), burst), ENCODE),
        ("nanocuda 3x TensorMap.tiled(torch) + Launcher", _loop(naive_python, (), burst), NAIVE),
        ("nanocuda bound Launcher(a, b, c), new tensors each call", bound_alternating_burst, NAIVE),
    ]
    bridge = False
    if use_bridge:
        from .. import torch_bridge

        try:
            print(f"torch bridge: enabled ({torch_bridge.enable():.1f} s to build or load)")
            bridge = True
        except Exception as e:  # noqa: BLE001 - reported; the exchange rows still run
            skipped.append(f"torch bridge ({type(e).__name__}: {str(e)[:300]})")

    def torch_variant(i: int, with_bridge: bool) -> Variant:
        name, fn, base = torch_rows[i]
        v = Variant(name + (BRIDGE if with_bridge else ""), _reading(with_bridge, fn), base)
        v.target = TARGETS[name]
        return v

    def torch_pair(i: int) -> list[Variant]:
        return [torch_variant(i, False)] + ([torch_variant(i, True)] if bridge else [])

    variants = [
        Variant(ENCODE, lambda: core.cpp_tma_burst(a, b, c, burst)),
        Variant("nanocuda TensorMap.tiled_from_pointer x3", _loop(encode_ptr, (), burst), ENCODE),
        Variant("  same call, 48 addresses in rotation (address swaps)", new_addresses_burst, ENCODE),
        Variant("  same call, shape alternating (full encodes)", _loop(new_geometry, (), burst), ENCODE),
        *torch_pair(0),
        Variant(NAIVE, lambda: core.cpp_tma_burst(a, b, c, burst, launcher)),
        *torch_pair(1),
        Variant("nanocuda bound Launcher(a, b, c), same tensors", _loop(bound, tuple(ts), burst), NAIVE),
        *torch_pair(2),
    ]
    for v in variants:
        if v.target is None:
            v.target = TARGETS.get(v.name)
    variants += _peers(ts, box, burst, skipped)
    return variants, skipped


def _peers(ts, box, burst, skipped):
    out = []
    try:
        from cuda.bindings import driver as drv

        dims = [drv.cuuint64_t(512), drv.cuuint64_t(512)]
        strides = [drv.cuuint64_t(1024)]
        boxd = [drv.cuuint32_t(64), drv.cuuint32_t(64)]
        elem = [drv.cuuint32_t(1), drv.cuuint32_t(1)]
        args = [(drv.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, t.data_ptr(), dims,
                 strides, boxd, elem, drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                 drv.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
                 drv.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                 drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) for t in ts]
        err, _ = drv.cuTensorMapEncodeTiled(*args[0])
        if int(err) != 0:
            raise RuntimeError(f"cuTensorMapEncodeTiled returned {err}")
        enc = drv.cuTensorMapEncodeTiled

        def bindings3():
            enc(*args[0])
            enc(*args[1])
            enc(*args[2])

        out.append(Variant("cuda.bindings cuTensorMapEncodeTiled x3, lists prebuilt",
                           _loop(bindings3, (), burst), ENCODE))
    except Exception as e:  # noqa: BLE001
        skipped.append(f"cuda.bindings ({type(e).__name__}: {e})")
    try:
        from cuda.core.utils import StridedMemoryView

        StridedMemoryView.from_dlpack(ts[0], stream_ptr=-1).as_tensor_map(box_dim=box)

        def core3():
            for t in ts:
                StridedMemoryView.from_dlpack(t, stream_ptr=-1).as_tensor_map(box_dim=box)

        out.append(Variant("cuda.core StridedMemoryView.as_tensor_map x3", _loop(core3, (), burst), ENCODE))
    except Exception as e:  # noqa: BLE001
        skipped.append(f"cuda.core as_tensor_map ({type(e).__name__}: {e})")
    return out


def run(rounds: int, burst: int, use_bridge: bool = True) -> dict:
    """Runs the comparison; prints the table; returns rows and skipped peers."""
    import nanocuda

    try:
        import torch
    except ImportError:
        print("\nbench tma: skipped (needs PyTorch for the tensors)")
        return {"rows": [], "skipped": ["torch not installed"]}
    variants, skipped = build_variants(burst, use_bridge)
    run_interleaved(variants, rounds, burst, nanocuda.Device(0).sync, "bench tma")
    rows = summarize(variants)
    if hasattr(nanocuda._nanocuda._testing, "tma_driver_ns"):
        ns = nanocuda._nanocuda._testing.tma_driver_ns(torch.empty(600 * 512, dtype=torch.float16,
                                                           device="cuda").data_ptr(), 20000)
        print(f"\ndriver, C++ loop: encode {ns['encode']:.1f} ns, address swap "
              f"{ns['replace_address']:.1f} ns per descriptor")
    print_table(f"TMA descriptors (3 x 512x512 fp16, box 64x64, 128B swizzle), bursts of {burst}, "
                f"{rounds} rounds (µs per iteration)", rows)
    for s in skipped:
        print(f"  skipped: {s}")
    return {"rows": rows, "skipped": skipped, "burst": burst, "rounds": rounds}
