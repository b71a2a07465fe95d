"""`nanocuda bench saxpy`: the CUDA Python overview's table, kernel and application time, C++ vs Python.

The overview's SAXPY (512 threads × 32768 blocks = 16M floats, x and y as pageable numpy
arrays). One application run = copy x and y to the device, launch, copy out back, sync,
timed with perf_counter on the host (the C++ side times itself with steady_clock); the
kernel is timed with CUDA events around the launch. C++ is a library built with nvcc at
bench time and called through ctypes, running the same cubin on the same stream with its
own device buffers. Sides alternate round by round; ratio = Python / C++.
"""

from __future__ import annotations

import ctypes
import tempfile
import time

from ..workflow import example_path
from . import native
from .registry import Subcommand, register
from .runner import Run, Workload, repeat

THREADS, BLOCKS = 512, 32768
N = THREADS * BLOCKS
A = 2.0


def load_library(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    fp = ctypes.POINTER(ctypes.c_float)
    lib.saxpy_setup.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    lib.saxpy_app.argtypes = [ctypes.c_uint64, ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_uint,
                              ctypes.POINTER(ctypes.c_int64), fp]
    lib.saxpy_teardown.argtypes = []
    return lib


class Saxpy(Subcommand):
    name = "saxpy"
    help = "SAXPY kernel and application time, C++ vs Python (CUDA Python overview)"

    def measure(self, run: Run) -> dict:
        """C++ and Python alternate in a fixed order each round (one run yields two samples,
        kernel and application, so they are not shuffled like burst workloads)."""
        return _measure(run)


def _measure(run: Run) -> dict:
    import numpy as np

    import nanocuda

    mod = nanocuda.load(example_path("saxpy.cu"))
    stream = nanocuda.Stream()
    x, y = np.random.rand(N).astype(np.float32), np.random.rand(N).astype(np.float32)
    out_py, out_cpp = np.zeros(N, np.float32), np.zeros(N, np.float32)
    expected = np.float32(A) * x + y
    dx, dy, dout = (nanocuda.Buffer(4 * N, stream=stream) for _ in range(3))
    saxpy = mod.saxpy.bind(nanocuda.LaunchConfig(grid=BLOCKS, block=THREADS), stream=stream)
    start, stop = nanocuda.Event(), nanocuda.Event()

    def python_app() -> tuple[int, float]:
        t0 = time.perf_counter_ns()
        nanocuda.copy(dx, x, stream=stream)
        nanocuda.copy(dy, y, stream=stream)
        start.record(stream)
        saxpy(A, dx, dy, dout, N)
        stop.record(stream)
        nanocuda.copy(out_py, dout, stream=stream)
        stream.sync()
        t1 = time.perf_counter_ns()
        return t1 - t0, start.elapsed_time(stop)

    sides = {"Python (nanocuda)": python_app}
    tmp = tempfile.TemporaryDirectory(prefix="nanocuda-bench-saxpy-")
    lib = None
    try:
        lib = load_library(native.build("saxpy_native.cpp", tmp.name))
        rc = lib.saxpy_setup(mod.code.code, N)
        if rc != 0:
            raise RuntimeError(f"saxpy_setup: CUresult {rc} ({nanocuda.result_name(rc)})")
        ns, ms = ctypes.c_int64(), ctypes.c_float()
        px, py, pout = (arr.ctypes.data for arr in (x, y, out_cpp))

        def cpp_app() -> tuple[int, float]:
            rc = lib.saxpy_app(stream.handle, A, px, py, pout, N, BLOCKS, THREADS,
                               ctypes.byref(ns), ctypes.byref(ms))
            if rc != 0:
                raise RuntimeError(f"saxpy_app: CUresult {rc}")
            return ns.value, ms.value

        sides = {"C++": cpp_app, **sides}
    except Exception as e:  # noqa: BLE001 - no nvcc or no driver library: reported, not fatal
        run.skip("C++ side", e)

    kernel = {name: Workload(f"{name}: kernel", lambda: 0) for name in sides}
    app = {name: Workload(f"{name}: application", lambda: 0) for name in sides}

    def one_round(r: int) -> None:
        for name, fn in sides.items():
            app_ns, kernel_ms = fn()
            app[name].samples.append(app_ns / 1000.0)
            kernel[name].samples.append(kernel_ms * 1000.0)

    try:
        for fn in sides.values():  # warm-up and check
            fn()
        for name, out in (("Python (nanocuda)", out_py), ("C++", out_cpp)):
            if name in sides and not np.allclose(out, expected):
                raise AssertionError(f"{name} SAXPY result outside tolerance")
        repeat(run.rounds, one_round, "bench saxpy")
    finally:
        if lib is not None:
            lib.saxpy_teardown()
        tmp.cleanup()
    if "C++" in sides:
        for table in (kernel, app):
            for name, v in table.items():
                if name != "C++":
                    v.baseline = table["C++"].name
    rows = run.summarize([*kernel.values(), *app.values()])
    run.table(f"SAXPY, {N} floats ({BLOCKS}×{THREADS}), {run.rounds} rounds (µs): kernel = events "
              "around the launch, application = 2 H2D + launch + D2H + sync", rows)
    print("  (the overview quotes, on its own GPU: kernel 352 µs C++ / 352 µs Python; "
          "application 1076 ms / 1080 ms for its whole program)")
    return run.result(rows, n=N, rounds=run.rounds)


run = register(Saxpy())
