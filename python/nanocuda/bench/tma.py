"""`nanocuda bench tma`: TMA descriptor creation (seed 001) and the seed-000 loop shape.

Workload: 3 descriptors per iteration, 512x512 fp16, box 64x64, 128B swizzle. Each path is
timed in bursts of iterations, interleaved with a native C++ loop built into the extension
(cuTensorMapEncodeTiled x3; and x3 + cuLaunchKernel of a kernel taking the 3 maps).

TensorMap.tiled remembers the last geometry and its descriptors for recent addresses (the
driver's bytes for the same arguments; see DescriptorCache), so the seed workload, which re-encodes
the same 3 maps, mostly reuses them. Two extra rows defeat that on purpose and show the cost
of the other paths: new addresses (an address swap each) and a new geometry every call (a
full validation + driver encode each).
"""

from __future__ import annotations

import time

from .registry import Subcommand, register
from .runner import Run, Workload
from .workloads import call_loop, calls, cpp_encode_loop, cuda_core_tensor_maps

SOURCE = r"""
#include <nanocuda/device/tma.cuh>
extern "C" __global__ void take3(const __grid_constant__ CUtensorMap a,
                                 const __grid_constant__ CUtensorMap b,
                                 const __grid_constant__ CUtensorMap c) {}
"""

ENCODE = "C++ cuTensorMapEncodeTiled loop, 3 descriptors"
NAIVE = "C++ 3 encodes + cuLaunchKernel (naive)"
BRIDGE = " [torch bridge]"  # suffix of the rows reading tensors through nanocuda.torch_bridge
ABI = " [torch C ABI]"  # suffix of the rows reading them through torch's stable C ABI (no setup)
SUFFIX = {"exchange": "", "abi": ABI, "bridge": BRIDGE}
BOX = (64, 64)
# The rows reading torch tensors: each runs twice when the bridge builds, with the same target.
TORCH_TARGETS = {
    "nanocuda TensorMap.tiled(torch) x3": 6.0,
    "nanocuda 3x TensorMap.tiled(torch) + Launcher": 1.25,
    "nanocuda bound Launcher(a, b, c), new tensors each call": 1.10,
}


def _reading(reader: str, burst_fn):
    """The burst, run with torch tensors read through `reader` (torch_bridge.select: "exchange",
    "abi" or "bridge"; switched outside the timed region)."""
    from .. import torch_bridge

    def run() -> int:
        torch_bridge.select(reader)
        return burst_fn()

    return run


def peer_workloads(run: Run, ts) -> list[Workload]:
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

        out.append(calls("cuda.bindings cuTensorMapEncodeTiled x3, lists prebuilt", bindings3, (), run.burst, ENCODE))
    except Exception as e:  # noqa: BLE001
        run.skip("cuda.bindings", e)
    try:
        out.append(cuda_core_tensor_maps("cuda.core StridedMemoryView.as_tensor_map x3", ts, BOX, run.burst, ENCODE))
    except Exception as e:  # noqa: BLE001
        run.skip("cuda.core as_tensor_map", e)
    return out


class Tma(Subcommand):
    name = "tma"
    help = "TMA descriptor creation vs C++, and the GEMM loop's descriptors + launch"
    needs = ("torch",)
    targets = {"nanocuda TensorMap.tiled_from_pointer x3": 2.5, **TORCH_TARGETS,
               **{name + BRIDGE: t for name, t in TORCH_TARGETS.items()},
               **{name + ABI: t for name, t in TORCH_TARGETS.items()}}

    def workloads(self, run: Run) -> list[Workload]:
        import torch

        import nanocuda

        burst, box = run.burst, BOX
        stream = nanocuda.Stream()
        ts = [torch.randn(512, 512, device="cuda").half() for _ in range(3)]
        ts2 = [torch.randn(512, 512, device="cuda").half() for _ in range(3)]  # same geometry
        torch.cuda.synchronize()
        a, b, c = (t.data_ptr() for t in ts)
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

        def new_addresses() -> int:  # the loop written out: a call per iteration would add its cost
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

        def bound_alternating() -> int:
            clock = time.perf_counter_ns
            t0 = clock()
            for i in range(burst):
                x, y, z = sets[i & 1]
                bound(x, y, z)
            return clock() - t0

        torch_rows = [
            ("nanocuda TensorMap.tiled(torch) x3", call_loop(encode_torch, (), burst), ENCODE),
            ("nanocuda 3x TensorMap.tiled(torch) + Launcher", call_loop(naive_python, (), burst), NAIVE),
            ("nanocuda bound Launcher(a, b, c), new tensors each call", bound_alternating, NAIVE),
        ]
        from .. import torch_bridge

        abi = False
        try:
            torch_bridge.select("abi")
            abi = True
        except Exception as e:  # noqa: BLE001 - reported; the exchange rows still run
            run.skip("torch C ABI reader", e)
        bridge = False
        if run.option("use_bridge", True):
            from .. import torch_bridge

            try:
                print(f"torch bridge: enabled ({torch_bridge.enable():.1f} s to build or load)")
                bridge = True
            except Exception as e:  # noqa: BLE001 - reported; the exchange rows still run
                run.skip("torch bridge", e, limit=300)

        def torch_pair(i: int) -> list[Workload]:
            name, fn, base = torch_rows[i]
            readers = ["exchange"] + (["abi"] if abi else []) + (["bridge"] if bridge else [])
            return [Workload(name + SUFFIX[r], _reading(r, fn), base) for r in readers]

        out = [
            cpp_encode_loop(ENCODE, (a, b, c), burst),
            calls("nanocuda TensorMap.tiled_from_pointer x3", encode_ptr, (), burst, ENCODE),
            Workload("  same call, 48 addresses in rotation (address swaps)", new_addresses, ENCODE),
            calls("  same call, shape alternating (full encodes)", new_geometry, (), burst, ENCODE),
            *torch_pair(0),
            cpp_encode_loop(NAIVE, (a, b, c), burst, launcher),
            *torch_pair(1),
            calls("nanocuda bound Launcher(a, b, c), same tensors", bound, tuple(ts), burst, NAIVE),
            *torch_pair(2),
        ]
        out[0].keep = (ts, ts2, pool)
        return out + peer_workloads(run, ts)

    def measure(self, run: Run) -> dict:
        import torch

        import nanocuda

        rows = run.measure(self.workloads(run), nanocuda.Device(0).sync)
        ns = nanocuda._nanocuda._bench.tma_driver_ns(torch.empty(600 * 512, dtype=torch.float16, device="cuda").data_ptr(), 20000)
        print(f"\ndriver, C++ loop: encode {ns['encode']:.1f} ns, address swap "
              f"{ns['replace_address']:.1f} ns per descriptor")
        run.table(f"TMA descriptors (3 x 512x512 fp16, box 64x64, 128B swizzle), bursts of {run.burst}, "
                  f"{run.rounds} rounds (µs per iteration)", rows)
        return run.result(rows, burst=run.burst, rounds=run.rounds)


run = register(Tma())
