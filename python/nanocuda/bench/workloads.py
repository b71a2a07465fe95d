"""Workloads more than one subcommand times, each defined once: Python call loops, the
in-process C++ loops the ratios divide by, and the cuda.core paths."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from .runner import Workload


def call_loop(fn: Callable, args: Sequence, count: int) -> Callable[[], int]:
    """A burst of `count` calls fn(a0, a1, ...) written as a user writes them, the arguments in
    local variables (no *args unpacking, which would add its own cost); returns ns."""
    names = [f"a{i}" for i in range(len(args))]
    source = f"def run():\n    {''.join(n + ', ' for n in names)}= args\n" if names else "def run():\n"
    source += (
        f"    t0 = clock()\n"
        f"    for _ in range(count):\n"
        f"        fn({', '.join(names)})\n"
        f"    return clock() - t0\n"
    )
    scope = {"fn": fn, "args": args, "count": count, "clock": time.perf_counter_ns}
    exec(compile(source, f"<burst {getattr(fn, '__name__', 'fn')}>", "exec"), scope)  # noqa: S102
    return scope["run"]


def python_burst(fn: Callable[[], None], count: int) -> Callable[[], int]:
    """A burst of `count` calls of a closure `fn()` from a Python loop; returns ns."""

    def run() -> int:
        clock = time.perf_counter_ns
        t0 = clock()
        for _ in range(count):
            fn()
        return clock() - t0

    return run


def calls(name: str, fn: Callable, args: Sequence, count: int, baseline: str | None = None,
          target: float | None = None) -> Workload:
    """`count` calls of fn(*args) from Python, as one workload."""
    return Workload(name, call_loop(fn, args, count), baseline, target)


def cpp_launch_loop(name: str, launcher, count: int) -> Workload:
    """C++ cuLaunchKernel loop of the extension's test hooks, replaying the arguments the
    Launcher packed at its last call (call it once before)."""
    from nanocuda._nanocuda import _bench

    return Workload(name, lambda: _bench.cpp_launch_burst(launcher, count))


def cpp_graph_loop(name: str, graph, count: int) -> Workload:
    """C++ cuGraphLaunch loop of the same graph."""
    from nanocuda._nanocuda import _bench

    return Workload(name, lambda: _bench.cpp_graph_burst(graph, count))


def cpp_encode_loop(name: str, pointers: Sequence[int], count: int, launcher=None) -> Workload:
    """C++ loop: 3 cuTensorMapEncodeTiled of 512x512 fp16 (box 64x64, 128B swizzle) at the
    given addresses, then cuLaunchKernel of `launcher`'s kernel with them when given."""
    from nanocuda._nanocuda import _bench

    a, b, c = pointers
    if launcher is None:
        return Workload(name, lambda: _bench.cpp_tma_burst(a, b, c, count))
    return Workload(name, lambda: _bench.cpp_tma_burst(a, b, c, count, launcher))


def cuda_core_kernel(cubin: bytes, kernel: str):
    """cuda.core's side of a launch comparison: (stream, LaunchConfig(grid=1, block=32),
    kernel, launch) on device 0 (ImportError or its errors where cuda.core cannot run)."""
    from cuda.core import Device, LaunchConfig, ObjectCode, launch

    dev = Device(0)
    dev.set_current()
    stream = dev.create_stream()
    return stream, LaunchConfig(grid=1, block=32), ObjectCode.from_cubin(cubin).get_kernel(kernel), launch


def cuda_core_tensor_maps(name: str, tensors: Sequence, box: tuple[int, int], count: int,
                          baseline: str) -> Workload:
    """cuda.core: StridedMemoryView.from_dlpack(t).as_tensor_map(box) for each tensor."""
    from cuda.core.utils import StridedMemoryView

    from_dlpack = StridedMemoryView.from_dlpack
    from_dlpack(tensors[0], stream_ptr=-1).as_tensor_map(box_dim=box)  # fail here, not mid-run

    def three():
        for t in tensors:
            from_dlpack(t, stream_ptr=-1).as_tensor_map(box_dim=box)

    return calls(name, three, (), count, baseline)
