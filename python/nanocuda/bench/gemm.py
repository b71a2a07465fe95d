"""`nanocuda bench gemm`: seed 000's benchmark, the 512×512 fp16 TMA GEMM called many ways.

Method (the seed's): per path, 10 warm-up calls, then 100 calls timed with CUDA events
around the whole loop (GPU time per call: for a kernel this small, the rate at which the
CPU can submit) and with perf_counter (CPU submit time per call). Unlike the seed, the
100-call measurement is repeated in interleaved rounds and min/median are reported, each
divided by the native C++ loop's figure. Every call of the "rebuilt" paths encodes the 3
TensorMaps again, as the seed's wrapper does. Each path's result is checked against torch
before it is timed. Needs torch (tensors, cuBLAS) and an sm_90 GPU; `--burst` is unused.
"""

from __future__ import annotations

import ctypes
import tempfile
import time

from ..workflow import example_path
from . import native
from .registry import Subcommand, register
from .runner import Run, Workload, repeat

SIZE = 512
CALLS, WARMUP = 100, 10
TILE = 64
BASELINE = "native C++ loop: encode 3 maps + launch"


def load_native_library(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    u64, i32 = ctypes.c_uint64, ctypes.c_int
    lib.gemm_setup.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    lib.gemm_call.argtypes = [u64, u64, u64, u64, i32, i32, i32]
    lib.gemm_loop.argtypes = [u64, u64, u64, u64, i32, i32, i32, i32, ctypes.POINTER(ctypes.c_int64)]
    return lib


class Path:
    """One way of calling the GEMM: `call()` once, or `loop(count)` returning CPU ns itself."""

    def __init__(self, name: str, call=None, loop=None):
        self.name, self.call, self.loop = name, call, loop
        self.gpu = Workload(f"{name} [GPU events]", lambda: 0)
        self.cpu = Workload(f"{name} [CPU submit]", lambda: 0)

    def run(self, count: int) -> int:
        if self.loop is not None:
            return self.loop(count)
        call, clock = self.call, time.perf_counter_ns
        t0 = clock()
        for _ in range(count):
            call()
        return clock() - t0


def build_paths(torch, stream, ts, a, b, c, skipped: list[str], tmp: str) -> list[Path]:
    import nanocuda

    mod = nanocuda.load(example_path("hopper_gemm.cu"), arch="sm_90a")
    kernel = mod.hopper_gemm.kernel
    m = n = k = SIZE
    config = nanocuda.LaunchConfig(grid=((n + TILE - 1) // TILE, (m + TILE - 1) // TILE), block=128)
    tiled = nanocuda.TensorMap.tiled
    box = (TILE, TILE)
    launcher = kernel.bind(config, stream=stream)
    ma, mb, mc = (tiled(t, box, swizzle="none") for t in (a, b, c))
    launch = nanocuda.launch

    paths = [
        Path("nanocuda launch(), 3 TensorMaps rebuilt per call",
             lambda: launch(stream, config, kernel, tiled(a, box, swizzle="none"),
                            tiled(b, box, swizzle="none"), tiled(c, box, swizzle="none"), k)),
        Path("nanocuda Launcher, 3 TensorMaps rebuilt per call",
             lambda: launcher(tiled(a, box, swizzle="none"), tiled(b, box, swizzle="none"),
                              tiled(c, box, swizzle="none"), k)),
        Path("nanocuda Launcher, prebuilt TensorMaps", lambda: launcher(ma, mb, mc, k)),
    ]

    cubin = mod.code.code
    h, pa, pb, pc = stream.handle, a.data_ptr(), b.data_ptr(), c.data_ptr()
    try:
        lib = load_native_library(native.build("gemm_native.cpp", tmp))
        rc = lib.gemm_setup(cubin, b"hopper_gemm")
        if rc != 0:
            raise RuntimeError(f"gemm_setup returned CUresult {rc} ({nanocuda.result_name(rc)})")
        ns = ctypes.c_int64()

        def native_loop(count: int) -> int:
            rc = lib.gemm_loop(h, pa, pb, pc, m, n, k, count, ctypes.byref(ns))
            if rc != 0:
                raise RuntimeError(f"gemm_loop: CUresult {rc}")
            return ns.value

        call_lib = lib.gemm_call
        paths += [Path(BASELINE, loop=native_loop),
                  Path("C++ shared library via ctypes (the seed's)", lambda: call_lib(h, pa, pb, pc, m, n, k))]
    except Exception as e:  # noqa: BLE001 - no nvcc, no driver library: reported, not fatal
        skipped.append(f"C++ library ({type(e).__name__}: {e})")

    paths += _peer_paths(cubin, stream, a, b, c, skipped)
    bt = b.T  # runs on the current torch stream: run() makes it `ts`
    paths.append(Path("torch.matmul (cuBLAS), a @ b.T", lambda: torch.matmul(a, bt, out=c)))
    return paths


def _peer_paths(cubin, stream, a, b, c, skipped: list[str]) -> list[Path]:
    out: list[Path] = []
    m = n = k = SIZE
    grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)
    try:  # the seed's "CUBIN approach": cuda.bindings encode + cuLaunchKernel per call
        from cuda.bindings import driver as drv

        err, module = drv.cuModuleLoadData(cubin)
        assert err == drv.CUresult.CUDA_SUCCESS, err
        err, fn = drv.cuModuleGetFunction(module, b"hopper_gemm")
        assert err == drv.CUresult.CUDA_SUCCESS, err
        u64, u32 = drv.cuuint64_t, drv.cuuint32_t
        f16 = drv.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16
        rest = ([u32(TILE), u32(TILE)], [u32(1), u32(1)],
                drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                drv.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
                drv.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)

        def encode(t, rows, cols):
            err, tm = drv.cuTensorMapEncodeTiled(f16, 2, t.data_ptr(), [u64(cols), u64(rows)],
                                                 [u64(cols * 2)], *rest)
            return tm

        hs = drv.CUstream(stream.handle)
        types = (None, None, None, ctypes.c_int)

        def call():
            args = (encode(a, m, k), encode(b, n, k), encode(c, m, n), k)
            drv.cuLaunchKernel(fn, grid[0], grid[1], 1, 128, 1, 1, 0, hs, (args, types), 0)

        out.append(Path("cuda.bindings: encode 3 maps + cuLaunchKernel", call))
        out[-1].keep = module
    except Exception as e:  # noqa: BLE001
        skipped.append(f"cuda.bindings ({type(e).__name__}: {e})")
    try:
        from cuda.core import Device as CoreDevice
        from cuda.core import LaunchConfig as CoreConfig
        from cuda.core import ObjectCode as CoreObjectCode
        from cuda.core import launch as core_launch
        from cuda.core.utils import StridedMemoryView

        dev = CoreDevice(0)
        dev.set_current()
        try:  # the same stream, so the events around the loop time this path's work
            from cuda.core import Stream as CoreStream

            cs = CoreStream.from_handle(stream.handle)
        except Exception:  # noqa: BLE001 - older cuda.core: the __cuda_stream__ protocol
            cs = dev.create_stream(stream)
        ck = CoreObjectCode.from_cubin(cubin).get_kernel("hopper_gemm")
        cc = CoreConfig(grid=grid, block=128)

        def as_map(t):
            view = StridedMemoryView.from_dlpack(t, stream_ptr=-1)
            return view.as_tensor_map(box_dim=(TILE, TILE))  # cuda.core's default swizzle is none

        import numpy as np

        kk = np.int32(k)
        out.append(Path("cuda.core: as_tensor_map x3 + launch()",
                        lambda: core_launch(cs, cc, ck, as_map(a), as_map(b), as_map(c), kk)))
    except Exception as e:  # noqa: BLE001
        skipped.append(f"cuda.core ({type(e).__name__}: {e})")
    return out


def _checked(paths, torch, a, b, c, ref, stream, skipped):
    """Keeps the paths whose one call produces the right C."""
    good = []
    for p in paths:
        try:
            c.zero_()
            torch.cuda.synchronize()
            p.run(1)
            stream.sync()
            torch.cuda.synchronize()
            err = (c.float() - ref).abs().max().item()
            if err > 0.05 * SIZE ** 0.5:
                raise AssertionError(f"wrong result, max |error| {err:.3g}")
            good.append(p)
        except Exception as e:  # noqa: BLE001
            skipped.append(f"{p.name} ({type(e).__name__}: {e})")
    return good


class Gemm(Subcommand):
    name = "gemm"
    help = "512x512 fp16 TMA GEMM, 100 calls per path (TMA descriptors built, then a launch) vs C++"
    needs = ("torch",)

    def measure(self, run: Run) -> dict:
        """Both tables (GPU events, CPU submit); the paths run in a fixed order each round,
        as the seed's (one run of 100 calls yields both samples)."""
        return _measure(run)


def _measure(run: Run) -> dict:
    import torch

    import nanocuda

    skipped = run.skipped
    rounds = run.rounds
    major, minor = nanocuda.Device(0).compute_capability
    if (major, minor) != (9, 0):
        msg = f"bench gemm runs an sm_90a kernel; device 0 is sm_{major}{minor}"
        print(f"\n  skipped: {msg}")
        return {"rows": [], "skipped": [msg]}

    ts = torch.cuda.Stream()
    stream = nanocuda.Stream.adopt(ts)
    a = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.float16)
    b = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.float16)
    c = torch.empty(SIZE, SIZE, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float().T
    with tempfile.TemporaryDirectory(prefix="nanocuda-bench-gemm-") as tmp:
        start, end = nanocuda.Event(), nanocuda.Event()
        with torch.cuda.stream(ts):
            paths = build_paths(torch, stream, ts, a, b, c, skipped, tmp)
            paths = _checked(paths, torch, a, b, c, ref, stream, skipped)
            for p in paths:
                p.run(WARMUP)
            stream.sync()

            def one_round(r: int) -> None:
                for p in paths:
                    start.record(stream)
                    cpu_ns = p.run(CALLS)
                    end.record(stream)
                    end.sync()
                    p.gpu.samples.append(start.elapsed_time(end) * 1000.0 / CALLS)
                    p.cpu.samples.append(cpu_ns / CALLS / 1000.0)

            repeat(rounds, one_round, "bench gemm")
    have_base = any(p.name == BASELINE for p in paths)
    for p in paths:
        for v in (p.gpu, p.cpu):
            v.baseline = (f"{BASELINE} {v.name[len(p.name) + 1:]}"
                          if have_base and p.name != BASELINE else None)
    gpu_rows = run.summarize([p.gpu for p in paths])
    cpu_rows = run.summarize([p.cpu for p in paths])
    from .. import torch_bridge

    reader = {"bridge": "the torch bridge", "abi": "torch's stable C ABI"}.get(
        torch_bridge.status()["reader"], "torch's DLPack exchange API")
    title = (f"fp16 GEMM {SIZE}x{SIZE}x{SIZE} (C = A·Bᵀ, 3 TMA maps; tensors read through {reader}), "
             f"{CALLS} calls after {WARMUP} warm-up, {rounds} rounds")
    run.table(f"{title}: CUDA-event time per call (µs)", gpu_rows)
    run.table(f"{title}: CPU submit time per call (µs)", cpu_rows)
    return run.result(gpu_rows + cpu_rows, calls=CALLS, warmup=WARMUP, rounds=rounds, size=SIZE)


run = register(Gemm())
