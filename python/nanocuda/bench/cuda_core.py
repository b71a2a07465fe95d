"""`nanocuda bench cuda_core`: the cuda.core-shaped calls on nanocuda, each against the same
C++ loop and against cuda.core itself in the same rounds.

Rows: `launch(s, config, ker, ...)` as seed 004 writes it (3 pointers and a `cp.uint64` /
numpy scalar size), with Buffers, and with CuPy arrays; `StridedMemoryView.from_dlpack(t)
.as_tensor_map(box)` for 3 tensors. Method as `bench launch`: interleaved bursts, min and
median per call, ratios against the C++ loop of the same round. Missing peers are skipped.
"""

from __future__ import annotations

import numpy as np

from .harness import Variant, print_table, run_interleaved, summarize
from .launch import _loop

SOURCE = r"""
extern "C" __global__ void vadd_shape(const float* a, const float* b, float* c, size_t n) {}
"""

LAUNCH_BASE = "C++ cuLaunchKernel loop (3 pointers + size_t)"
TMA_BASE = "C++ cuTensorMapEncodeTiled x3 (512x512 fp16)"
# The seed-004 call is nanocuda's general launch() path, so it keeps that path's target.
TARGETS = {"nanocuda launch(s, config, ker, 3 ints, np.uint64)": 1.15}


def _launch_rows(burst: int, skipped: list[str]) -> list[Variant]:
    import nanocuda
    from nanocuda import _nanocuda as core

    dev = nanocuda.Device(0)
    dev.set_current()
    s = dev.create_stream()
    code = nanocuda.compile(SOURCE)
    ker = code.get_kernel("vadd_shape")
    config = nanocuda.LaunchConfig(grid=1, block=32)
    n = 1 << 20
    bufs = [dev.allocate(4 * n, stream=s) for _ in range(3)]
    p = [b.handle for b in bufs]
    size = np.uint64(n)
    bound = ker.bind(config, stream=s)
    bound(p[0], p[1], p[2], n)  # leaves these arguments packed for the C++ loop
    launch = nanocuda.launch
    rows = [
        Variant(LAUNCH_BASE, lambda: core._testing.cpp_launch_burst(bound, burst)),
        Variant("nanocuda launch(s, config, ker, 3 ints, np.uint64)",
                _loop(launch, (s, config, ker, p[0], p[1], p[2], size), burst), LAUNCH_BASE),
        Variant("nanocuda launch(s, config, ker, 3 Buffers, np.uint64)",
                _loop(launch, (s, config, ker, bufs[0], bufs[1], bufs[2], size), burst), LAUNCH_BASE),
    ]
    keep: list = [bufs]
    try:
        import cupy as cp

        arrays = [cp.zeros(n, dtype=cp.float32) for _ in range(3)]
        cp.cuda.Device().synchronize()
        ptrs = [a.data.ptr for a in arrays]
        rows.append(Variant("nanocuda launch(s, config, ker, a.data.ptr x3, cp.uint64)",
                            _loop(launch, (s, config, ker, ptrs[0], ptrs[1], ptrs[2], cp.uint64(n)), burst),
                            LAUNCH_BASE))
        rows.append(Variant("nanocuda launch(s, config, ker, 3 CuPy arrays, cp.uint64)",
                            _loop(launch, (s, config, ker, arrays[0], arrays[1], arrays[2], cp.uint64(n)), burst),
                            LAUNCH_BASE))
        keep.append(arrays)
    except Exception as e:  # noqa: BLE001
        skipped.append(f"CuPy rows ({type(e).__name__}: {e})")
    try:
        from cuda.core import Device as CoreDevice
        from cuda.core import LaunchConfig as CoreConfig
        from cuda.core import ObjectCode as CoreObjectCode
        from cuda.core import launch as core_launch

        cdev = CoreDevice(0)
        cdev.set_current()
        cs = cdev.create_stream()
        ck = CoreObjectCode.from_cubin(code.code if hasattr(code, "code") else bytes(code)).get_kernel("vadd_shape")
        cc = CoreConfig(grid=1, block=32)
        core_launch(cs, cc, ck, p[0], p[1], p[2], size)
        rows.append(Variant("cuda.core launch(s, config, ker, 3 ints, np.uint64)",
                            _loop(core_launch, (cs, cc, ck, p[0], p[1], p[2], size), burst), LAUNCH_BASE))
        cbufs = [cdev.allocate(4 * n, stream=cs) for _ in range(3)]
        core_launch(cs, cc, ck, cbufs[0], cbufs[1], cbufs[2], size)
        rows.append(Variant("cuda.core launch(s, config, ker, 3 Buffers, np.uint64)",
                            _loop(core_launch, (cs, cc, ck, cbufs[0], cbufs[1], cbufs[2], size), burst),
                            LAUNCH_BASE))
        # nanocuda's launch on cuda.core's stream: the __cuda_stream__ protocol path
        rows.append(Variant("nanocuda launch(cuda.core Stream, ..., 3 ints, np.uint64)",
                            _loop(launch, (cs, config, ker, p[0], p[1], p[2], size), burst), LAUNCH_BASE))
        keep.append(cbufs)
    except Exception as e:  # noqa: BLE001
        skipped.append(f"cuda.core launch ({type(e).__name__}: {str(e)[:200]})")
    rows[0].keep = keep
    return rows


def _tensors(skipped: list[str]):
    try:
        import torch

        ts = [torch.randn(512, 512, device="cuda").half() for _ in range(3)]
        torch.cuda.synchronize()
        return ts, [t.data_ptr() for t in ts]
    except Exception as e:  # noqa: BLE001
        skipped.append(f"torch tensors for the TMA rows ({type(e).__name__}: {e}); trying CuPy")
    import cupy as cp

    ts = [cp.zeros((512, 512), dtype=cp.float16) for _ in range(3)]
    cp.cuda.Device().synchronize()
    return ts, [t.data.ptr for t in ts]


def _tma_rows(burst: int, skipped: list[str]) -> list[Variant]:
    from nanocuda import _nanocuda as core
    from nanocuda.utils import StridedMemoryView

    try:
        ts, (a, b, c) = _tensors(skipped)
    except Exception as e:  # noqa: BLE001
        skipped.append(f"TMA rows ({type(e).__name__}: {e})")
        return []
    box = (64, 64)
    from_dlpack = StridedMemoryView.from_dlpack
    from_dlpack(ts[0], stream_ptr=-1).as_tensor_map(box_dim=box)

    def nano3():
        for t in ts:
            from_dlpack(t, stream_ptr=-1).as_tensor_map(box_dim=box)

    rows = [
        Variant(TMA_BASE, lambda: core._testing.cpp_tma_burst(a, b, c, burst)),
        Variant("nanocuda StridedMemoryView.from_dlpack(t).as_tensor_map x3", _loop(nano3, (), burst), TMA_BASE),
    ]
    rows[0].keep = ts
    try:
        from cuda.core.utils import StridedMemoryView as CoreView

        core_from = CoreView.from_dlpack
        core_from(ts[0], stream_ptr=-1).as_tensor_map(box_dim=box)

        def core3():
            for t in ts:
                core_from(t, stream_ptr=-1).as_tensor_map(box_dim=box)

        rows.append(Variant("cuda.core StridedMemoryView.from_dlpack(t).as_tensor_map x3",
                            _loop(core3, (), burst), TMA_BASE))
    except Exception as e:  # noqa: BLE001
        skipped.append(f"cuda.core as_tensor_map ({type(e).__name__}: {str(e)[:200]})")
    return rows


def run(rounds: int, burst: int, use_bridge: bool = True) -> dict:
    """Runs both comparisons; prints the tables; returns rows and skipped peers."""
    import nanocuda

    del use_bridge  # these rows read no torch tensors through the bridge
    skipped: list[str] = []
    variants = _launch_rows(burst, skipped) + _tma_rows(burst, skipped)
    for v in variants:
        v.target = TARGETS.get(v.name)
    run_interleaved(variants, rounds, burst, nanocuda.Device(0).sync, "bench cuda_core")
    rows = summarize(variants)
    print_table(f"cuda.core-shaped calls, bursts of {burst}, {rounds} interleaved rounds "
                f"(µs per call; TMA rows: per 3 descriptors)", rows)
    for s in skipped:
        print(f"  skipped: {s}")
    return {"rows": rows, "skipped": skipped, "burst": burst, "rounds": rounds}
