"""`nanocuda bench cuda_core`: the cuda.core-shaped calls on nanocuda, each against the same
C++ loop and against cuda.core itself in the same rounds.

Rows: `launch(s, config, ker, ...)` as seed 004 writes it (3 pointers and a `cp.uint64` /
numpy scalar size), with Buffers, and with CuPy arrays; `StridedMemoryView.from_dlpack(t)
.as_tensor_map(box)` for 3 tensors. Method as `bench launch`: interleaved bursts, min and
median per call, ratios against the C++ loop of the same round. Missing peers are skipped.
"""

from __future__ import annotations

from .registry import Subcommand, register
from .runner import Run, Workload
from .workloads import calls, cpp_encode_loop, cpp_launch_loop, cuda_core_kernel

SOURCE = r"""
extern "C" __global__ void vadd_shape(const float* a, const float* b, float* c, size_t n) {}
"""

LAUNCH_BASE = "C++ cuLaunchKernel loop (3 pointers + size_t)"
TMA_BASE = "C++ cuTensorMapEncodeTiled x3 (512x512 fp16)"


def launch_workloads(run: Run) -> list[Workload]:
    import numpy as np

    import nanocuda

    burst = run.burst
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
        cpp_launch_loop(LAUNCH_BASE, bound, burst),
        calls("nanocuda launch(s, config, ker, 3 ints, np.uint64)", launch,
              (s, config, ker, p[0], p[1], p[2], size), burst, LAUNCH_BASE),
        calls("nanocuda launch(s, config, ker, 3 Buffers, np.uint64)", launch,
              (s, config, ker, bufs[0], bufs[1], bufs[2], size), burst, LAUNCH_BASE),
    ]
    keep: list = [bufs]
    try:
        import cupy as cp

        arrays = [cp.zeros(n, dtype=cp.float32) for _ in range(3)]
        cp.cuda.Device().synchronize()
        ptrs = [a.data.ptr for a in arrays]
        rows.append(calls("nanocuda launch(s, config, ker, a.data.ptr x3, cp.uint64)", launch,
                          (s, config, ker, ptrs[0], ptrs[1], ptrs[2], cp.uint64(n)), burst, LAUNCH_BASE))
        rows.append(calls("nanocuda launch(s, config, ker, 3 CuPy arrays, cp.uint64)", launch,
                          (s, config, ker, arrays[0], arrays[1], arrays[2], cp.uint64(n)), burst, LAUNCH_BASE))
        keep.append(arrays)
    except Exception as e:  # noqa: BLE001
        run.skip("CuPy rows", e)
    try:
        cs, cc, ck, core_launch = cuda_core_kernel(code.code if hasattr(code, "code") else bytes(code), "vadd_shape")
        core_launch(cs, cc, ck, p[0], p[1], p[2], size)
        rows.append(calls("cuda.core launch(s, config, ker, 3 ints, np.uint64)", core_launch,
                          (cs, cc, ck, p[0], p[1], p[2], size), burst, LAUNCH_BASE))
        from cuda.core import Device as CoreDevice

        cbufs = [CoreDevice(0).allocate(4 * n, stream=cs) for _ in range(3)]
        core_launch(cs, cc, ck, cbufs[0], cbufs[1], cbufs[2], size)
        rows.append(calls("cuda.core launch(s, config, ker, 3 Buffers, np.uint64)", core_launch,
                          (cs, cc, ck, cbufs[0], cbufs[1], cbufs[2], size), burst, LAUNCH_BASE))
        # nanocuda's launch on cuda.core's stream: the __cuda_stream__ protocol path
        rows.append(calls("nanocuda launch(cuda.core Stream, ..., 3 ints, np.uint64)", launch,
                          (cs, config, ker, p[0], p[1], p[2], size), burst, LAUNCH_BASE))
        keep.append(cbufs)
    except Exception as e:  # noqa: BLE001
        run.skip("cuda.core launch", e, limit=200)
    rows[0].keep = keep
    return rows


def _tensors(run: Run):
    try:
        import torch

        ts = [torch.randn(512, 512, device="cuda").half() for _ in range(3)]
        torch.cuda.synchronize()
        return ts, [t.data_ptr() for t in ts]
    except Exception as e:  # noqa: BLE001
        run.skipped.append(f"torch tensors for the TMA rows ({type(e).__name__}: {e}); trying CuPy")
    import cupy as cp

    ts = [cp.zeros((512, 512), dtype=cp.float16) for _ in range(3)]
    cp.cuda.Device().synchronize()
    return ts, [t.data.ptr for t in ts]


def tma_workloads(run: Run) -> list[Workload]:
    from nanocuda.utils import StridedMemoryView

    from .workloads import cuda_core_tensor_maps

    try:
        ts, ptrs = _tensors(run)
    except Exception as e:  # noqa: BLE001
        run.skip("TMA rows", e)
        return []
    box = (64, 64)
    from_dlpack = StridedMemoryView.from_dlpack
    from_dlpack(ts[0], stream_ptr=-1).as_tensor_map(box_dim=box)

    def nano3():
        for t in ts:
            from_dlpack(t, stream_ptr=-1).as_tensor_map(box_dim=box)

    rows = [
        cpp_encode_loop(TMA_BASE, ptrs, run.burst),
        calls("nanocuda StridedMemoryView.from_dlpack(t).as_tensor_map x3", nano3, (), run.burst, TMA_BASE),
    ]
    rows[0].keep = ts
    try:
        rows.append(cuda_core_tensor_maps("cuda.core StridedMemoryView.from_dlpack(t).as_tensor_map x3",
                                          ts, box, run.burst, TMA_BASE))
    except Exception as e:  # noqa: BLE001
        run.skip("cuda.core as_tensor_map", e, limit=200)
    return rows


class CudaCore(Subcommand):
    name = "cuda_core"
    help = "cuda.core-shaped launch() and StridedMemoryView.as_tensor_map vs C++ and vs cuda.core itself"
    # The seed-004 call is nanocuda's general launch() path, so it keeps that path's target.
    targets = {"nanocuda launch(s, config, ker, 3 ints, np.uint64)": 1.15}

    def measure(self, run: Run) -> dict:
        import nanocuda

        rows = run.measure(launch_workloads(run) + tma_workloads(run), nanocuda.Device(0).sync)
        run.table(f"cuda.core-shaped calls, bursts of {run.burst}, {run.rounds} interleaved rounds "
                  f"(µs per call; TMA rows: per 3 descriptors)", rows)
        return run.result(rows, burst=run.burst, rounds=run.rounds)


run = register(CudaCore())
