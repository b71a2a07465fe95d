"""`nanocuda bench launch`: per-launch CPU cost against a native C++ cuLaunchKernel loop.

Method (the launch issue's): bursts of `burst` launches timed on the CPU, a stream sync
(untimed) after each, all paths interleaved round by round, repeated; min and median per
launch, each divided by the C++ loop's figure from the same process and the same rounds.
"""

from __future__ import annotations

from .registry import Subcommand, register
from .runner import Run, Workload
from .workloads import calls, cpp_graph_loop, cpp_launch_loop, cuda_core_kernel

SOURCE = r"""
extern "C" __global__ void empty4(const void* a, const void* b, void* c, int n) {}
extern "C" __global__ void empty16(const void* p0, const void* p1, void* p2, void* p3,
                                   int i0, int i1, int i2, int i3,
                                   float f0, float f1, float f2, float f3,
                                   long long l0, long long l1, double d0, double d1) {}
"""

CPP4 = "C++ cuLaunchKernel loop (4 args)"
CPP16 = "C++ cuLaunchKernel loop (16 args)"
CPP_GRAPH = "C++ cuGraphLaunch loop, 1-kernel graph"
TORCH_EXCHANGE = "nanocuda Launcher: 3 torch tensors + int (DLPack exchange)"
TORCH_BRIDGE = "nanocuda Launcher: 3 torch tensors + int (torch bridge)"
TORCH_ABI = "nanocuda Launcher: 3 torch tensors + int (torch C ABI, no setup)"


def torch_workloads(run: Run, kernel, config, stream) -> list[Workload]:
    """The torch rows: one Launcher reading tensors through torch's DLPack exchange API and,
    when the bridge can be enabled, one reading them through it (each Launcher chooses its
    reader on its first call and keeps it, so both run interleaved in the same rounds)."""
    try:
        import torch

        from .. import torch_bridge
    except Exception as e:  # noqa: BLE001
        run.skip("torch tensors", e)
        return []
    ta, tb, tc = (torch.zeros(1024, device="cuda") for _ in range(3))
    torch.cuda.synchronize()
    torch_bridge.disable()
    by_exchange = kernel.bind(config, stream=stream)
    by_exchange(ta, tb, tc, 1)
    out = [calls(TORCH_EXCHANGE, by_exchange, (ta, tb, tc, 1), run.burst, CPP4)]
    try:
        torch_bridge.select("abi")
        by_abi = kernel.bind(config, stream=stream)
        by_abi(ta, tb, tc, 1)
        out.append(calls(TORCH_ABI, by_abi, (ta, tb, tc, 1), run.burst, CPP4))
    except Exception as e:  # noqa: BLE001 - reported, the exchange row still runs
        run.skip("torch C ABI reader", e)
    if not run.option("use_bridge", True):
        return out
    try:
        seconds = torch_bridge.enable()
        print(f"torch bridge: enabled ({seconds:.1f} s to build or load)")
    except Exception as e:  # noqa: BLE001 - reported, the exchange row still runs
        run.skip("torch bridge", e, limit=300)
        return out
    by_bridge = kernel.bind(config, stream=stream)
    by_bridge(ta, tb, tc, 1)
    out.append(calls(TORCH_BRIDGE, by_bridge, (ta, tb, tc, 1), run.burst, CPP4))
    return out


def peer_workloads(run: Run, cubin: bytes, stream, p: int) -> list[Workload]:
    """The same empty launch through cuda.core, cuda.bindings, CuPy and Triton."""
    import numpy as np

    burst = run.burst
    out: list[Workload] = []
    try:
        cs, cc, ck, core_launch = cuda_core_kernel(cubin, "empty4")
        n = np.int32(1)
        core_launch(cs, cc, ck, p, p, p, n)
        out.append(calls("cuda.core launch()", core_launch, (cs, cc, ck, p, p, p, n), burst, CPP4))
    except Exception as e:  # noqa: BLE001
        run.skip("cuda.core", e)
    try:
        import ctypes

        from cuda.bindings import driver as drv

        err, mod = drv.cuModuleLoadData(cubin)
        err, fn = drv.cuModuleGetFunction(mod, b"empty4")
        ptrs = np.array([p, p, p], dtype=np.uint64)
        n32 = np.array([1], dtype=np.int32)
        params = np.array([ptrs[0:].ctypes.data, ptrs[1:].ctypes.data, ptrs[2:].ctypes.data, n32.ctypes.data],
                          dtype=np.uint64)
        hs = drv.CUstream(stream.handle)
        args = (fn, 1, 1, 1, 32, 1, 1, 0, hs, params.ctypes.data, 0)
        out.append(calls("cuda.bindings cuLaunchKernel, pre-packed void**", drv.cuLaunchKernel, args, burst, CPP4))
        types = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)
        per_call = (fn, 1, 1, 1, 32, 1, 1, 0, hs, ((p, p, p, 1), types), 0)
        drv.cuLaunchKernel(*per_call)  # fail here, not mid-run, if the form is refused
        out.append(calls("cuda.bindings cuLaunchKernel, ((values), (types)) per call",
                         drv.cuLaunchKernel, per_call, burst, CPP4))
        out[-1].keep = out[-2].keep = (ptrs, n32, params)  # the packed memory stays alive
    except Exception as e:  # noqa: BLE001
        run.skip("cuda.bindings", e)
    try:
        import cupy

        f = cupy.RawModule(code=SOURCE).get_function("empty4")
        a = cupy.zeros(16, dtype=cupy.float32)
        cargs = (a, a, a, np.int32(1))
        with cupy.cuda.ExternalStream(stream.handle):
            f((1,), (32,), cargs)
        out.append(calls("CuPy RawKernel", f, ((1,), (32,), cargs), burst, CPP4))
    except Exception as e:  # noqa: BLE001
        run.skip("CuPy", e)
    try:
        import torch
        import triton

        @triton.jit
        def empty(a, b, c, n):
            pass

        ta = torch.zeros(16, device="cuda")
        empty[(1,)](ta, ta, ta, 1)
        torch.cuda.synchronize()
        out.append(calls("Triton @jit, torch tensors", lambda: empty[(1,)](ta, ta, ta, 1), (), burst, CPP4))
    except Exception as e:  # noqa: BLE001
        run.skip("Triton", e)
    return out


class Launch(Subcommand):
    name = "launch"
    help = "launch CPU cost vs a C++ cuLaunchKernel loop"
    targets = {
        "nanocuda Launcher: 3 pointers (int) + int": 1.05,
        TORCH_EXCHANGE: 1.10,
        TORCH_BRIDGE: 1.10,
        TORCH_ABI: 1.10,
        "nanocuda Launcher: 16 mixed arguments": 1.10,
        "nanocuda launch(): 3 pointers (int) + int": 1.15,
        "nanocuda Graph.launch(), 1-kernel graph": 1.05,
    }

    def workloads(self, run: Run) -> list[Workload]:
        import nanocuda

        burst = run.burst
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
        out = [
            cpp_launch_loop(CPP4, l4, burst),
            cpp_launch_loop(CPP16, l16, burst),
            calls("nanocuda Launcher: 3 pointers (int) + int", l4, (p, p, p, 1), burst, CPP4),
            calls("nanocuda Launcher: 16 mixed arguments", l16, mixed, burst, CPP16),
            calls("nanocuda launch(): 3 pointers (int) + int", nanocuda.launch,
                  (stream, config, k4, p, p, p, 1), burst, CPP4),
        ]
        out[0].keep = buf
        graph = nanocuda.Graph()
        with graph.capture(stream):
            l4(p, p, p, 1)
        out += [cpp_graph_loop(CPP_GRAPH, graph, burst),
                calls("nanocuda Graph.launch(), 1-kernel graph", graph.launch, (stream,), burst, CPP_GRAPH)]
        out += torch_workloads(run, k4, config, stream)
        cubin = code.code if hasattr(code, "code") else bytes(code)
        return out + peer_workloads(run, cubin, stream, p)

    def measure(self, run: Run) -> dict:
        import nanocuda

        rows = run.measure(self.workloads(run), nanocuda.Device(0).sync)
        run.table(f"Launch CPU cost, bursts of {run.burst}, {run.rounds} interleaved rounds (µs per launch)", rows)
        return run.result(rows, burst=run.burst, rounds=run.rounds)


run = register(Launch())
