"""`nanocuda bench launch`: per-launch CPU cost against a native C++ cuLaunchKernel loop.

Method (the launch issue's): bursts of `burst` launches timed on the CPU, a stream sync
(untimed) after each, all paths interleaved round by round, repeated; min and median per
launch, each divided by the C++ loop's figure from the same process and the same rounds.
"""

from __future__ import annotations

import numpy as np

from .harness import Variant, print_table, run_interleaved, summarize

SOURCE = r"""
extern "C" __global__ void empty4(const void* a, const void* b, void* c, int n) {}
extern "C" __global__ void empty16(const void* p0, const void* p1, void* p2, void* p3,
                                   int i0, int i1, int i2, int i3,
                                   float f0, float f1, float f2, float f3,
                                   long long l0, long long l1, double d0, double d1) {}
"""

TORCH_EXCHANGE = "nanocuda Launcher: 3 torch tensors + int (DLPack exchange)"
TORCH_BRIDGE = "nanocuda Launcher: 3 torch tensors + int (torch bridge)"
TARGETS = {
    "nanocuda Launcher: 3 pointers (int) + int": 1.05,
    TORCH_EXCHANGE: 1.10,
    TORCH_BRIDGE: 1.10,
    "nanocuda Launcher: 16 mixed arguments": 1.10,
    "nanocuda launch(): 3 pointers (int) + int": 1.15,
    "nanocuda Graph.launch(), 1-kernel graph": 1.05,
}


def _loop(fn, args, count):
    """A Python burst of `count` calls written as a user writes them: fn(a, b, c, n) with the
    arguments in local variables (no *args unpacking, which would add its own cost)."""
    names = [f"a{i}" for i in range(len(args))]
    source = (
        f"def run():\n"
        f"    {''.join(n + ', ' for n in names)}= args\n" if names else "def run():\n"
    )
    source += (
        f"    t0 = clock()\n"
        f"    for _ in range(count):\n"
        f"        fn({', '.join(names)})\n"
        f"    return clock() - t0\n"
    )
    import time

    scope = {"fn": fn, "args": args, "count": count, "clock": time.perf_counter_ns}
    exec(compile(source, f"<burst {getattr(fn, '__name__', 'fn')}>", "exec"), scope)  # noqa: S102
    return scope["run"]


def torch_variants(kernel, config, stream, burst: int, skipped: list[str],
                   use_bridge: bool = True) -> list[Variant]:
    """The torch rows: one Launcher reading tensors through torch's DLPack exchange API and,
    when the bridge can be enabled, one reading them through it (each Launcher chooses its
    reader on its first call and keeps it, so both run interleaved in the same rounds)."""
    base = "C++ cuLaunchKernel loop (4 args)"
    try:
        import torch

        from .. import torch_bridge
    except Exception as e:  # noqa: BLE001
        skipped.append(f"torch tensors ({type(e).__name__}: {e})")
        return []
    ta, tb, tc = (torch.zeros(1024, device="cuda") for _ in range(3))
    torch.cuda.synchronize()
    torch_bridge.disable()
    by_exchange = kernel.bind(config, stream=stream)
    by_exchange(ta, tb, tc, 1)
    out = [Variant(TORCH_EXCHANGE, _loop(by_exchange, (ta, tb, tc, 1), burst), base)]
    if not use_bridge:
        return out
    try:
        seconds = torch_bridge.enable()
        print(f"torch bridge: enabled ({seconds:.1f} s to build or load)")
    except Exception as e:  # noqa: BLE001 - reported, the exchange row still runs
        skipped.append(f"torch bridge ({type(e).__name__}: {str(e)[:300]})")
        return out
    by_bridge = kernel.bind(config, stream=stream)
    by_bridge(ta, tb, tc, 1)
    out.append(Variant(TORCH_BRIDGE, _loop(by_bridge, (ta, tb, tc, 1), burst), base))
    return out


def build_variants(burst: int, use_bridge: bool = True) -> tuple[list[Variant], object, list[str]]:
    import nanocuda
    from nanocuda._nanocuda import _testing as core

    skipped: list[str] = []
    stream = nanocuda.Stream()
    code = nanocuda.compile(SOURCE)
    k4, k16 = code.get_kernel("empty4"), code.get_kernel("empty16")
    config = nanocuda.LaunchConfig(grid=1, block=32)
    buf = nanocuda.Buffer(1 << 20, stream=stream)
    p = buf.ptr
    l4 = k4.bind(config, stream=stream)
    l4(p, p, p, 1)  # leaves these arguments packed for the C++ loop
    l16 = k16.bind(config, stream=stream)
    mixed = (p, p, p, p, 1, 2, 3, 4, 1.0, 2.0, 3.0, 4.0, 5, 6, 7.0, 8.0)
    l16(*mixed)
    launch = nanocuda.launch

    variants = [
        Variant("C++ cuLaunchKernel loop (4 args)", lambda: core.cpp_launch_burst(l4, burst)),
        Variant("C++ cuLaunchKernel loop (16 args)", lambda: core.cpp_launch_burst(l16, burst)),
        Variant("nanocuda Launcher: 3 pointers (int) + int", _loop(l4, (p, p, p, 1), burst),
                "C++ cuLaunchKernel loop (4 args)"),
        Variant("nanocuda Launcher: 16 mixed arguments", _loop(l16, mixed, burst),
                "C++ cuLaunchKernel loop (16 args)"),
        Variant("nanocuda launch(): 3 pointers (int) + int",
                _loop(launch, (stream, config, k4, p, p, p, 1), burst),
                "C++ cuLaunchKernel loop (4 args)"),
    ]

    graph = nanocuda.Graph()
    with graph.capture(stream):
        l4(p, p, p, 1)
    variants += [
        Variant("C++ cuGraphLaunch loop, 1-kernel graph", lambda: core.cpp_graph_burst(graph, burst)),
        Variant("nanocuda Graph.launch(), 1-kernel graph", _loop(graph.launch, (stream,), burst),
                "C++ cuGraphLaunch loop, 1-kernel graph"),
    ]

    variants += torch_variants(k4, config, stream, burst, skipped, use_bridge)

    cubin = code.code if hasattr(code, "code") else bytes(code)
    variants += _peers(cubin, stream, p, burst, skipped)
    for v in variants:
        v.target = TARGETS.get(v.name)
    return variants, stream, skipped


def _peers(cubin: bytes, stream, p: int, burst: int, skipped: list[str]) -> list[Variant]:
    base = "C++ cuLaunchKernel loop (4 args)"
    out: list[Variant] = []
    try:
        from cuda.core import Device as CoreDevice
        from cuda.core import LaunchConfig as CoreConfig
        from cuda.core import ObjectCode as CoreObjectCode
        from cuda.core import launch as core_launch

        dev = CoreDevice(0)
        dev.set_current()
        cs = dev.create_stream()
        ck = CoreObjectCode.from_cubin(cubin).get_kernel("empty4")
        cc = CoreConfig(grid=1, block=32)
        n = np.int32(1)
        core_launch(cs, cc, ck, p, p, p, n)
        out.append(Variant("cuda.core launch()", _loop(core_launch, (cs, cc, ck, p, p, p, n), burst), base))
    except Exception as e:  # noqa: BLE001
        skipped.append(f"cuda.core ({type(e).__name__}: {e})")
    try:
        from cuda.bindings import driver as drv

        err, mod = drv.cuModuleLoadData(cubin)
        err, fn = drv.cuModuleGetFunction(mod, b"empty4")
        ptrs = np.array([p, p, p], dtype=np.uint64)
        n32 = np.array([1], dtype=np.int32)
        params = np.array([ptrs[0:].ctypes.data, ptrs[1:].ctypes.data, ptrs[2:].ctypes.data, n32.ctypes.data],
                          dtype=np.uint64)
        hs = drv.CUstream(stream.handle)
        args = (fn, 1, 1, 1, 32, 1, 1, 0, hs, params.ctypes.data, 0)
        out.append(Variant("cuda.bindings cuLaunchKernel, pre-packed void**", _loop(drv.cuLaunchKernel, args, burst), base))
        import ctypes

        types = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)
        per_call = (fn, 1, 1, 1, 32, 1, 1, 0, hs, ((p, p, p, 1), types), 0)
        drv.cuLaunchKernel(*per_call)  # fail here, not mid-run, if the form is refused
        out.append(Variant("cuda.bindings cuLaunchKernel, ((values), (types)) per call",
                           _loop(drv.cuLaunchKernel, per_call, burst), base))
        out[-1].keep = (ptrs, n32, params)  # keep the packed memory alive
        out[-2].keep = (ptrs, n32, params)
    except Exception as e:  # noqa: BLE001
        skipped.append(f"cuda.bindings ({type(e).__name__}: {e})")
    try:
        import cupy

        f = cupy.RawModule(code=SOURCE).get_function("empty4")
        a = cupy.zeros(16, dtype=cupy.float32)
        cargs = (a, a, a, np.int32(1))
        with cupy.cuda.ExternalStream(stream.handle):
            f((1,), (32,), cargs)
        out.append(Variant("CuPy RawKernel", _loop(f, ((1,), (32,), cargs), burst), base))
    except Exception as e:  # noqa: BLE001
        skipped.append(f"CuPy ({type(e).__name__}: {e})")
    try:
        import torch
        import triton

        @triton.jit
        def empty(a, b, c, n):
            pass

        ta = torch.zeros(16, device="cuda")
        empty[(1,)](ta, ta, ta, 1)
        torch.cuda.synchronize()
        out.append(Variant("Triton @jit, torch tensors", _loop(lambda: empty[(1,)](ta, ta, ta, 1), (), burst), base))
    except Exception as e:  # noqa: BLE001
        skipped.append(f"Triton ({type(e).__name__}: {e})")
    return out


def run(rounds: int, burst: int, use_bridge: bool = True) -> dict:
    """Runs the comparison; returns {"rows": [...], "skipped": [...]} and prints the table."""
    import nanocuda

    variants, stream, skipped = build_variants(burst, use_bridge)
    device = nanocuda.Device(0)
    run_interleaved(variants, rounds, burst, device.sync, "bench launch")
    rows = summarize(variants)
    print_table(f"Launch CPU cost, bursts of {burst}, {rounds} interleaved rounds (µs per launch)", rows)
    for s in skipped:
        print(f"  skipped: {s}")
    return {"rows": rows, "skipped": skipped, "burst": burst, "rounds": rounds}
