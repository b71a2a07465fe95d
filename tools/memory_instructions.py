#!/usr/bin/env python3
"""Instructions per stream-ordered allocate+free pair on the mock driver (no GPU needed), via
callgrind: the host-side cost of `nanocuda bench memory`'s allocation rows, before/after.

    cc -shared -fPIC -O2 -o /tmp/libcuda_mock.so tools/mock_libcuda.c
    python3 tools/memory_instructions.py /tmp/libcuda_mock.so

Rows: the bench's Python loop bodies (`mr.allocate(1 MiB, stream).close()` and
`dev.allocate(...).close()`, each through a lambda as `python_burst` calls it) and the bench's
C++ loop (python/nanocuda/bench/memory_native.cpp, built with g++ against the mock). Each
figure is the difference between runs with 2*CALLS and CALLS pairs, divided by CALLS, twice:
"nanocuda" counts only nanocuda's extension, the C++ loop's library and the mock (stable
across interpreter builds); "total" counts the whole process (interpreter, allocator, libc),
which is what the GPU ratio sees on top of the driver's own time.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_instructions import self_costs  # noqa: E402  (one callgrind parser)

CALLS = 20000
ALLOC = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))
NATIVE = os.path.join(HERE, "..", "python", "nanocuda", "bench", "memory_native.cpp")
# The mock exports only cuInit and cuGetProcAddress; the C++ loop links the entry points it
# calls by name, so they are linked to the same do-nothing bodies here.
SHIM = r"""
#include <cuda.h>
extern "C" {
CUresult cuInit(unsigned) { return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice* d, int) { *d = 0; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) { *c = nullptr; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult cuMemAllocFromPoolAsync(CUdeviceptr* p, size_t, CUmemoryPool, CUstream) {
  *p = 0x7f0000000000ull; return CUDA_SUCCESS; }
CUresult cuMemFreeAsync(CUdeviceptr, CUstream) { return CUDA_SUCCESS; }
CUresult cuMemcpyPeerAsync(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream) {
  return CUDA_SUCCESS; }
CUresult cuMemcpyAsync(CUdeviceptr, CUdeviceptr, size_t, CUstream) { return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
}
"""


def workload(kind: str, pairs: int, native: str) -> None:
    import nanocuda

    dev = nanocuda.Device(0)
    dev.set_current()  # as the bench's thread has it (its C++ side makes the context current)
    stream = nanocuda.Stream(device=dev)
    mr = dev.memory_resource
    if kind == "cpp":
        import ctypes

        lib = ctypes.CDLL(native)
        lib.mem_alloc_free.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_int]
        lib.mem_alloc_free.restype = ctypes.c_int64
        lib.mem_alloc_free(mr.handle, stream.handle, ALLOC, pairs)
        return
    lst = [0]
    fn = {"mr": lambda: mr.allocate(ALLOC, stream).close(),
          "dev": lambda: dev.allocate(ALLOC, stream).close(),
          "buffer": lambda: nanocuda.Buffer(ALLOC, stream=stream).close(),
          # The floor of any Python binding: the same loop and lambda, two C method calls, one
          # object made and freed (list.copy().clear()).
          "floor": lambda: lst.copy().clear()}[kind]
    fn()
    for _ in range(pairs):
        fn()


def costs(callgrind_out: str) -> tuple[int, int]:
    """(self cost of _nanocuda*/mock*/native objects, total cost) from callgrind's output."""
    return self_costs(callgrind_out, ("_nanocuda", "mock", "mem_native"))


def per_pair(mock: str, kind: str, calls: int = CALLS, native: str = "") -> tuple[float, float]:
    """(nanocuda's, the whole process's) instructions per pair of `kind` (not "cpp": that one
    needs the native loop built, as main() does); tests/python/test_perf_paths.py bounds it."""
    a, b = measure(mock, native, kind, calls), measure(mock, native, kind, 2 * calls)
    return (b[0] - a[0]) / calls, (b[1] - a[1]) / calls


def measure(mock: str, native: str, kind: str, pairs: int) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        # NANOCUDA_MOCK_CTX_STACK: the current context stays set, as on a GPU (the fixed answer
        # of the default mock made every checked call switch contexts twice); NANOCUDA_MOCK_STREAMS:
        # created streams get their own handles, as on a GPU (not 0, the implicit stream's).
        env = dict(os.environ, NANOCUDA_LIBCUDA=mock, PYTHONHASHSEED="0", NANOCUDA_MOCK_CTX_STACK="1",
                   NANOCUDA_MOCK_STREAMS="1")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        "--compress-strings=no", "--compress-pos=no",
                        sys.executable, os.path.abspath(__file__), "--workload", kind, str(pairs), native],
                       check=True, env=env, cwd=tmp, capture_output=True)
        return costs(open(out).read())


def main() -> None:
    if sys.argv[1:2] == ["--workload"]:
        workload(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    mock = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "/tmp/libcuda_mock.so")
    only = sys.argv[2:] or ["mr", "dev", "buffer", "cpp", "floor"]
    with tempfile.TemporaryDirectory() as tmp:
        native, shim = os.path.join(tmp, "libmem_native_mock.so"), os.path.join(tmp, "shim_mock.cpp")
        with open(shim, "w") as f:
            f.write(SHIM)
        subprocess.run(["g++", "-O3", "-shared", "-fPIC", "-std=c++17",
                        "-I" + os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/include",
                        "-o", native, NATIVE, shim], check=True)
        labels = {"mr": "mr.allocate(1 MiB, s).close()", "dev": "dev.allocate(1 MiB, s).close()",
                  "buffer": "Buffer(1 MiB, stream=s).close()",
                  "floor": "floor: lst.copy().clear() in the same loop",
                  "cpp": "C++ cuMemAllocFromPoolAsync+cuMemFreeAsync"}
        for kind in only:
            ours, total = per_pair(mock, kind, CALLS, native)
            print(f"{labels[kind]:45s} nanocuda {ours:6.0f}   total {total:6.0f} instructions per pair")


if __name__ == "__main__":
    main()
