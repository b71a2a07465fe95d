#!/usr/bin/env python3
"""Instructions per Python launch call on the mock driver (no GPU needed), via callgrind:
a stable measure of the host-side cost, for before/after comparisons of the hot path.

    cc -shared -fPIC -O2 -o /tmp/libcuda_mock.so tools/mock_libcuda.c
    python3 tools/launch_instructions.py /tmp/libcuda_mock.so
    python3 tools/launch_instructions.py /tmp/libcuda_mock.so --tma   # the TMA paths instead

Each figure is the difference between a run with CALLS calls and one with none, divided by
CALLS, counting only instructions executed in nanocuda's extension (which holds libnanocuda)
and the mock driver: the interpreter's share varies with hash seeds and start-up, nanocuda's
does not. The kernel is compiled once outside valgrind (disk cache).
"""
import os
import re
import subprocess
import sys
import tempfile

CALLS = 20000
TMA_CALLS = 5000  # six workloads, each run twice under callgrind
KERNEL = r'''extern "C" __global__ void k(const float* a, const float* b, float* c, int n) {}'''


def workload(launcher_calls: int, launch_calls: int) -> None:
    import nanocuda

    k = nanocuda.compile(KERNEL, arch="90").get_kernel("k")
    cfg = nanocuda.LaunchConfig(grid=1, block=32)
    stream = nanocuda.Stream.legacy(nanocuda.Device(0))
    run = k.bind(cfg, stream=stream)
    a, b, c = 0x7F0000001000, 0x7F0000002000, 0x7F0000003000
    run(a, b, c, 4)  # the first calls decide each slot's argument kind
    nanocuda.launch(stream, cfg, k, a, b, c, 4)
    for _ in range(launcher_calls):
        run(a, b, c, 4)
    for _ in range(launch_calls):
        nanocuda.launch(stream, cfg, k, a, b, c, 4)


TMA_WORKLOADS = {
    "tiled_from_pointer, 3 addresses (reuse)": ("from_pointer", 3),
    "tiled_from_pointer, 8 addresses (swap)": ("from_pointer", 8),
    "tiled(tensor, box), 3 addresses (reuse)": ("tiled", 3),
    "tiled(tensor, box), 8 addresses (swap)": ("tiled", 8),
    "bound-map Launcher call, 3 addresses (reuse)": ("bound", 3),
    "bound-map Launcher call, 8 addresses (swap)": ("bound", 8),
}


def tma_workload(kind: str, addresses: int, calls: int) -> None:
    """seed-001 geometry (512x512 fp16, box 64x64, 128B swizzle) at `addresses` rotating
    addresses: 3 stay inside the caches' 4 recent descriptors, 8 make every call a swap.
    Tensors are __cuda_array_interface__ objects (no torch needed); the bound-map kernel's
    first parameter is a 128-byte CUtensorMap (NANOCUDA_MOCK_PARAMS)."""
    import nanocuda

    class CAI:
        def __init__(self, ptr):
            self.__cuda_array_interface__ = {"shape": (512, 512), "typestr": "<f2",
                                             "data": (ptr, False), "version": 3, "strides": None}

    ptrs = [0x7F0000000000 + 0x100000 * i for i in range(addresses)]
    tensors = [CAI(p) for p in ptrs]
    box = (64, 64)
    if kind == "from_pointer":
        shape = (512, 512)
        call = lambda i: nanocuda.TensorMap.tiled_from_pointer(ptrs[i], "float16", shape, box=box, swizzle=128)
    elif kind == "tiled":
        call = lambda i: nanocuda.TensorMap.tiled(tensors[i], box, swizzle=128)
    else:
        k = nanocuda.compile(KERNEL, arch="90").get_kernel("k")
        cfg = nanocuda.LaunchConfig(grid=1, block=32)
        stream = nanocuda.Stream.legacy(nanocuda.Device(0))
        run = k.bind(cfg, stream=stream, tensor_maps={0: nanocuda.TensorMap.tiled(tensors[0], box, swizzle=128)})
        b, c = 0x7F0000002000, 0x7F0000003000
        call = lambda i: run(tensors[i], b, c, 4)
    for i in range(addresses):
        call(i)  # first sight: slots classified, the geometry encoded once
    for n in range(calls):
        call(n % addresses)


def self_costs(callgrind_out: str, ours=("_nanocuda", "mock")) -> tuple[int, int]:
    """(self cost (Ir) of the objects whose names contain any of `ours`, the whole process's
    self cost) from callgrind's output file."""
    names: dict[str, str] = {}

    def resolve(spec: str) -> str:
        m = re.match(r"\((\d+)\)(?: (.*))?", spec)
        if not m:
            return spec
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "")

    ob, mine, total, after_call = "", 0, 0, False
    for line in callgrind_out.splitlines():
        if line.startswith("ob="):
            ob = resolve(line[3:])
        elif line.startswith("cob="):
            resolve(line[4:])
        elif line.startswith("calls="):
            after_call = True  # the next cost line is the callee's inclusive cost
        elif line[:1].isdigit() or line[:1] in "+-*":
            if after_call:
                after_call = False
                continue
            parts = line.split()
            if len(parts) > 1:
                total += int(parts[1])
                if any(o in ob for o in ours):
                    mine += int(parts[1])
    return mine, total


def nanocuda_cost(callgrind_out: str) -> int:
    """Self cost (Ir) of the objects named _nanocuda* or *mock*, from callgrind's output file."""
    return self_costs(callgrind_out)[0]


def instructions(mock: str, launcher_calls: int, launch_calls: int, tma: str = "") -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = dict(os.environ, NANOCUDA_LIBCUDA=mock, PYTHONHASHSEED="0",
                   NANOCUDA_MOCK_PARAMS="128,8,8,4" if tma else "8,8,8,4")
        workload_args = ["--tma-workload", tma, str(launcher_calls)] if tma else [
            "--workload", str(launcher_calls), str(launch_calls)]
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        "--compress-strings=no", "--compress-pos=no",
                        sys.executable, os.path.abspath(__file__), *workload_args],
                       check=True, env=env, cwd=tmp, capture_output=True)
        return nanocuda_cost(open(out).read())


def main() -> None:
    if sys.argv[1:2] == ["--workload"]:
        workload(int(sys.argv[2]), int(sys.argv[3]))
        return
    if sys.argv[1:2] == ["--tma-workload"]:
        kind, addresses = TMA_WORKLOADS[sys.argv[2]]
        tma_workload(kind, addresses, int(sys.argv[3]))
        return
    args = [a for a in sys.argv[1:] if a != "--tma"]
    mock = args[0] if args else "/tmp/libcuda_mock.so"
    subprocess.run([sys.executable, os.path.abspath(__file__), "--workload", "0", "0"],
                   check=True, env=dict(os.environ, NANOCUDA_LIBCUDA=mock))  # fills the cache
    if "--tma" in sys.argv[1:]:
        for name in TMA_WORKLOADS:
            base = instructions(mock, 0, 0, name)
            print(f"{name + ':':46} {(instructions(mock, TMA_CALLS, 0, name) - base) / TMA_CALLS:.0f} instructions")
        return
    base = instructions(mock, 0, 0)
    print(f"Launcher call, 4 args: {(instructions(mock, CALLS, 0) - base) / CALLS:.0f} instructions")
    print(f"launch(), 4 args:      {(instructions(mock, 0, CALLS) - base) / CALLS:.0f} instructions")


if __name__ == "__main__":
    main()
