"""`nanocuda bench memory`: allocation, pinned and peer copies, and IPC handoffs vs C++ loops.

Rows (each against a C++ loop built with nvcc at bench time, called through ctypes, same
pool/stream/buffers, interleaved round by round; ratio = Python time / C++ time):
- stream-ordered allocate+free of 1 MiB: nanocuda DeviceMemoryResource.allocate + close, and
  Device.allocate, vs cuMemAllocFromPoolAsync + cuMemFreeAsync (target ≤1.2×); beside them
  torch's caching allocator and cuda.core's DeviceMemoryResource (no target, for scale);
- pinned host->device and device->host copies of 64 MiB (target ≤1.053×, i.e. ≥95% of C++'s
  bandwidth);
- peer copies of 256 MiB both directions when there are 2 GPUs (same target);
- IPC handoff: export + send to a spawned child + import + first kernel + reply, per
  handoff (median of N; no C++ row: it is a process round trip).
"""

from __future__ import annotations

import ctypes
import statistics
import tempfile
import time

from . import native
from .registry import Subcommand, register
from .runner import Run, Workload
from .workloads import python_burst

MIB = 1 << 20
ALLOC = MIB
PINNED = 64 * MIB
PEER = 256 * MIB
BW_TARGET = 1 / 0.95
ALLOC_BASE = "C++ cuMemAllocFromPoolAsync+cuMemFreeAsync 1 MiB"
ALLOC_OURS = "nanocuda DeviceMemoryResource.allocate+close"
COPIES = ("pinned H->D 64 MiB", "pinned D->H 64 MiB", "peer 0->1 256 MiB", "peer 1->0 256 MiB")


def _load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    u64, i64 = ctypes.c_uint64, ctypes.c_int64
    lib.mem_primary_context.argtypes, lib.mem_primary_context.restype = [ctypes.c_int], u64
    lib.mem_set_context.argtypes = [u64]
    lib.mem_alloc_free.argtypes, lib.mem_alloc_free.restype = [u64, u64, ctypes.c_size_t, ctypes.c_int], i64
    lib.mem_copy.argtypes = [u64, u64, u64, u64, ctypes.c_size_t, u64, ctypes.c_int]
    lib.mem_copy.restype = i64
    return lib


def _checked(ns: int, what: str) -> int:
    if ns < 0:
        raise RuntimeError(f"{what}: CUresult {-ns}")
    return ns


def _alloc_rows(lib, run: Run) -> list[dict]:
    import nanocuda

    burst = run.burst
    dev = nanocuda.Device(0)
    stream = nanocuda.Stream(device=dev)
    mr = dev.memory_resource
    lib.mem_set_context(lib.mem_primary_context(0))
    pool, sh = mr.handle, stream.handle
    workloads = [
        Workload(ALLOC_BASE, lambda: _checked(lib.mem_alloc_free(pool, sh, ALLOC, burst), "alloc")),
        Workload(ALLOC_OURS, python_burst(lambda: mr.allocate(ALLOC, stream).close(), burst), ALLOC_BASE),
        Workload("nanocuda Device.allocate+close",
                 python_burst(lambda: dev.allocate(ALLOC, stream).close(), burst), ALLOC_BASE),
    ]
    try:
        import torch

        torch.cuda.init()
        ts = torch.cuda.ExternalStream(sh)

        def torch_alloc() -> None:
            with torch.cuda.stream(ts):
                torch.empty(ALLOC, dtype=torch.uint8, device="cuda")

        workloads.append(Workload("torch caching allocator (torch.empty + free)", python_burst(torch_alloc, burst),
                                  ALLOC_BASE))
    except Exception as e:  # noqa: BLE001 - a missing peer is reported, not fatal
        run.skipped.append(f"torch: {e}")
    try:
        from cuda.core import Device as CoreDevice
        from cuda.core import DeviceMemoryResource as CoreDMR

        cd = CoreDevice(0)
        cd.set_current()
        cmr = CoreDMR(0)
        cs = cd.create_stream()
        workloads.append(Workload("cuda.core DeviceMemoryResource.allocate+close",
                                  python_burst(lambda: cmr.allocate(ALLOC, stream=cs).close(), burst), ALLOC_BASE))
    except Exception as e:  # noqa: BLE001
        run.skipped.append(f"cuda.core: {e}")
    return run.measure(workloads, stream.sync, label="alloc")


def _copy_rows(lib, run: Run, rounds: int, title: str, pairs: list[tuple], count: int) -> list[dict]:
    """pairs: (label, dst, dst_ctx, src, src_ctx, size, stream) per direction."""
    import nanocuda

    workloads = []
    for label, dst, dctx, src, sctx, size, stream in pairs:
        base = f"C++ {label}"
        d_ptr, s_ptr, sh = dst.ptr, src.ptr, stream.handle

        def cpp(d_ptr=d_ptr, s_ptr=s_ptr, dctx=dctx, sctx=sctx, size=size, sh=sh) -> int:
            return _checked(lib.mem_copy(d_ptr, dctx, s_ptr, sctx, size, sh, count), label)

        def py(dst=dst, src=src, stream=stream) -> int:
            t0 = time.perf_counter_ns()
            for _ in range(count):
                nanocuda.copy(dst, src, stream=stream)
            stream.sync()
            return time.perf_counter_ns() - t0

        workloads += [Workload(base, cpp), Workload(f"nanocuda.copy {label}", py, base)]
    rows = run.measure(workloads, None, rounds=rounds, per_sample=count, label=title)
    for r in rows:  # every pair in one call copies the same size
        r["gb_per_s"] = pairs[0][5] / (r["min_us"] * 1e-6) / 1e9
    return rows


def _ipc_handoffs(count: int) -> dict:
    import multiprocessing as mp

    import nanocuda

    from . import _memory_child

    ctx = mp.get_context("spawn")
    dev = nanocuda.Device(0)
    mr = nanocuda.DeviceMemoryResource(dev, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
    stream = nanocuda.Stream(device=dev)
    inbox, outbox = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_memory_child.serve, args=(inbox, outbox))
    child.start()
    try:
        warm = mr.allocate(MIB, stream=stream)
        stream.sync()
        inbox.put(warm)
        outbox.get(timeout=120)  # the child's first import maps the pool and compiles
        times = []
        for _ in range(count):
            buf = mr.allocate(MIB, stream=stream)
            stream.sync()
            t0 = time.perf_counter()
            inbox.put(buf)
            outbox.get(timeout=60)
            times.append((time.perf_counter() - t0) * 1e3)
            buf.close()
        inbox.put(None)
    finally:
        child.join(60)
    return {"handoffs": count, "median_ms": statistics.median(times), "min_ms": min(times)}


class Memory(Subcommand):
    name = "memory"
    help = "allocate+free, pinned and peer copies vs C++ loops, IPC handoffs"
    targets = {ALLOC_OURS: 1.2, **{f"nanocuda.copy {label}": BW_TARGET for label in COPIES}}

    def measure(self, run: Run) -> dict:
        """Every row; the JSON also has "ipc" (the handoff times)."""
        import nanocuda

        tmp = tempfile.TemporaryDirectory(prefix="nanocuda-bench-memory-")
        lib = _load(native.build("memory_native.cpp", tmp.name))
        rows = _alloc_rows(lib, run)
        run.table("stream-ordered allocate+free, 1 MiB (µs per pair)", rows)

        dev = nanocuda.Device(0)
        stream = nanocuda.Stream(device=dev)
        pinned = nanocuda.PinnedMemoryResource().allocate(PINNED, stream=stream)
        dbuf = dev.allocate(PINNED, stream=stream)
        copy_rounds = max(5, run.rounds // 10)
        prow = _copy_rows(lib, run, copy_rounds, "pinned", [
            ("pinned H->D 64 MiB", dbuf, 0, pinned, 0, PINNED, stream),
            ("pinned D->H 64 MiB", pinned, 0, dbuf, 0, PINNED, stream)], 4)
        run.table("pinned host<->device copies, 64 MiB (µs per copy; ratio ≤1.053 = ≥95% bandwidth)", prow)
        rows += prow
        if nanocuda.Device.count() >= 2:
            d1 = nanocuda.Device(1)
            c0, c1 = lib.mem_primary_context(0), lib.mem_primary_context(1)
            b0 = dev.allocate(PEER, stream=stream)
            b1 = d1.allocate(PEER, stream=nanocuda.Stream(device=d1))
            dev.enable_peer_access(d1)
            d1.enable_peer_access(dev)
            peer = _copy_rows(lib, run, copy_rounds, "peer", [
                ("peer 0->1 256 MiB", b1, c1, b0, c0, PEER, stream),
                ("peer 1->0 256 MiB", b0, c0, b1, c1, PEER, stream)], 4)
            run.table("peer copies between 2 GPUs, 256 MiB (µs per copy; ratio ≤1.053 = ≥95% bandwidth)", peer)
            rows += peer
        else:
            run.skip("peer copies: needs 2 GPUs")
        ipc = _ipc_handoffs(20 if run.rounds >= 50 else 5)
        print(f"\nIPC handoff (export + send + import + first kernel + reply, 1 MiB): "
              f"median {ipc['median_ms']:.2f} ms, min {ipc['min_ms']:.2f} ms over {ipc['handoffs']}")
        return run.result(rows, ipc=ipc)


run = register(Memory())
