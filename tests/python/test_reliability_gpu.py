"""GPU reliability: 8 threads doing everything at once with exact results, and faults
(illegal address, __trap, a long kernel under a timed wait, OOM during graph capture),
each fault in its own process, with a later process checked to be unharmed."""

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import nanocuda
from nanocuda import TensorMap
from testing_hooks import hooks

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __global__ void fill(int* out, int value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value + i;
}
extern "C" __global__ void increment(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}
__global__ void scale(float a, const float* x, float* y, unsigned long n) {
  unsigned long i = blockIdx.x * (unsigned long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
"""


@pytest.fixture(scope="module")
def code():
    return nanocuda.compile(SOURCE, name_expressions=["scale"])


def to_host(buf, dtype, n, stream):
    out = np.zeros(n, dtype=dtype)
    nanocuda.copy(out, buf, size=out.nbytes, stream=stream)  # a prefix of the buffer
    stream.sync()
    return out


def run_threads(work, count=8):
    errors = []

    def wrapped(t):
        try:
            work(t)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((t, repr(e)))

    threads = [threading.Thread(target=wrapped, args=(t,)) for t in range(count)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=600)
    assert not any(th.is_alive() for th in threads), "a thread hung"
    assert not errors, errors


def test_eight_threads_do_everything_at_once(code, device):
    """Each thread launches (launch() and a Launcher), builds TensorMaps compared byte for
    byte with the raw driver encode, compiles its own source and captures and replays a
    graph, all at once; every result is checked exactly."""
    n, rounds = 4096, 50
    fill, inc = code.get_kernel("fill"), code.get_kernel("increment")
    encode_raw = hooks.encode_tiled_raw  # here, not in a thread: skips without the test hooks

    def work(t):
        s = nanocuda.Stream(device=device)
        buf = nanocuda.Buffer(n * 4, stream=s)
        cfg = nanocuda.LaunchConfig(grid=n // 256, block=256)
        nanocuda.launch(s, cfg, fill, buf, 1000 * t, n)
        launcher = inc.bind(cfg, stream=s)
        for _ in range(rounds):
            launcher(buf, n)
        want = 1000 * t + np.arange(n, dtype=np.int32) + rounds
        np.testing.assert_array_equal(to_host(buf, np.int32, n, s), want)
        # TensorMaps: per-thread geometry and addresses; the memo must not mix threads.
        for r in range(200):
            rows = 64 + 8 * ((t + r) % 8)
            ptr = buf.ptr + 256 * (r % 4)
            tm = TensorMap.tiled_from_pointer(ptr, "float16", (rows, 128), box=(8, 64), swizzle=128)
            raw = encode_raw(6, 2, ptr, [128, rows], [256], [64, 8], [1, 1], 0, 3, 2, 0)
            assert bytes(tm) == raw, (t, r)
        # A compile of its own (distinct source: a cache miss), then its kernel.
        own = nanocuda.compile(f'extern "C" __global__ void k{t}(int* o) {{ o[threadIdx.x] = {t} * 7 + threadIdx.x; }}')
        nanocuda.launch(s, nanocuda.LaunchConfig(grid=1, block=64), own.get_kernel(f"k{t}"), buf)
        np.testing.assert_array_equal(to_host(buf, np.int32, 64, s), t * 7 + np.arange(64))
        # A graph captured on this thread's stream, replayed.
        nanocuda.memset(buf, 0, stream=s)
        graph = nanocuda.Graph()
        with graph.capture(s):
            launcher(buf, n)
            launcher(buf, n)
        for _ in range(5):
            graph.launch()
        np.testing.assert_array_equal(to_host(buf, np.int32, n, s), np.full(n, 10, np.int32))

    run_threads(work)


def test_eight_threads_share_one_launcher(code, device):
    s = nanocuda.Stream(device=device)
    n, rounds = 1024, 300
    bufs = [nanocuda.Buffer(n * 4, stream=s) for _ in range(8)]
    for b in bufs:
        nanocuda.memset(b, 0, stream=s)
    launcher = code.get_kernel("increment").bind(nanocuda.LaunchConfig(grid=n // 256, block=256), stream=s)

    def work(t):
        for _ in range(rounds):
            launcher(bufs[t], n)

    run_threads(work)
    for b in bufs:
        np.testing.assert_array_equal(to_host(b, np.int32, n, s), np.full(n, rounds, np.int32))


def test_typed_kernel_rejects_float_for_pointer_on_every_path(code, device):
    s = nanocuda.Stream(device=device)
    scale = code.get_kernel("scale")
    buf = nanocuda.Buffer(4096, stream=s)
    cfg = nanocuda.LaunchConfig(grid=1, block=32)
    with pytest.raises(TypeError, match="parameter 1 is a pointer"):
        nanocuda.launch(s, cfg, scale, 2.0, 3.0, buf, 32)
    f = scale.bind(cfg, stream=s)
    f(2.0, buf, buf, 32)
    with pytest.raises(TypeError, match="parameter 0 is a floating-point value"):
        f(2, buf, buf, 32)
    f(2.0, buf, buf, 32)  # the slot is still usable after the rejection
    s.sync()


CHILD_PRELUDE = """
import nanocuda, numpy as np, time, sys
s = nanocuda.Stream()
def kernel(src, name):
    return nanocuda.compile(src).get_kernel(name)
"""

FAULTS = {
    "illegal-address": ("""
        k = kernel('extern "C" __global__ void bad(int* p) { p[threadIdx.x] = 1; }', "bad")
        nanocuda.launch(s, nanocuda.LaunchConfig(grid=1, block=32), k, 0x10)
        s.sync()
        """, "CUDA_ERROR_ILLEGAL_ADDRESS"),
    "trap": ("""
        k = kernel('extern "C" __global__ void t() { __trap(); }', "t")
        nanocuda.launch(s, nanocuda.LaunchConfig(grid=1, block=1), k)
        s.sync()
        """, "CUDA_ERROR_LAUNCH_FAILED|ILLEGAL_INSTRUCTION|TRAP"),
    "graph-capture-oom": ("""
        g = nanocuda.Graph()
        with g.capture(s):
            b = nanocuda.Buffer(1 << 50, stream=s)  # a 1 PiB allocation node
            b.close()
        g.launch()  # if capture accepted it, instantiation or launch must refuse it
        s.sync()
        """, "OUT_OF_MEMORY|out of memory|CUDA_ERROR"),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_is_a_clear_error_and_the_next_process_is_unharmed(name):
    body, pattern = FAULTS[name]
    code = CHILD_PRELUDE + textwrap.dedent(body)
    wrapped = ("import re, traceback\ntry:\n" + textwrap.indent(code, "    ") +
               "\nexcept nanocuda.CudaError as e:\n    print('CLEAR', type(e).__name__, e.name, '|', e)\n"
               "else:\n    print('NO-ERROR')\n")
    r = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, timeout=120, cwd="/tmp")
    assert r.returncode >= 0, f"crashed with signal {-r.returncode}: {r.stderr[-2000:]}"
    assert "CLEAR" in r.stdout, r.stdout + r.stderr[-2000:]
    import re

    assert re.search(pattern, r.stdout), r.stdout
    after = subprocess.run([sys.executable, "-c", CHILD_PRELUDE + textwrap.dedent("""
        k = kernel('extern "C" __global__ void ok(int* p) { p[threadIdx.x] = 5; }', "ok")
        b = nanocuda.Buffer(128, stream=s)
        nanocuda.launch(s, nanocuda.LaunchConfig(grid=1, block=32), k, b)
        out = np.zeros(32, np.int32); nanocuda.copy(out, b, stream=s); s.sync()
        print("FINE", int(out.sum()))
        """)], capture_output=True, text=True, timeout=120, cwd="/tmp")
    assert "FINE 160" in after.stdout, after.stdout + after.stderr[-2000:]


def test_long_kernel_under_a_timed_wait():
    """A kernel that spins ~1.5 s: a poll with a deadline sees it still running, the wait
    ends, and the result is right; a watchdog-like wait never hangs the test."""
    code = textwrap.dedent("""
        import nanocuda, numpy as np, time
        s = nanocuda.Stream()
        k = nanocuda.compile(r'''extern "C" __global__ void spin(long long cycles, int* out) {
          long long start = clock64(); while (clock64() - start < cycles) {} out[0] = 42; }''').get_kernel("spin")
        b = nanocuda.Buffer(4, stream=s)
        nanocuda.launch(s, nanocuda.LaunchConfig(grid=1, block=1), k, int(1.5 * 2e9), b)
        t0 = time.monotonic()
        early = s.query()
        deadline = t0 + 30
        while not s.query():
            if time.monotonic() > deadline:
                print("TIMEOUT"); raise SystemExit(3)
            time.sleep(0.01)
        out = np.zeros(1, np.int32); nanocuda.copy(out, b, stream=s); s.sync()
        print("DONE", early, round(time.monotonic() - t0, 2), int(out[0]))
        """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90, cwd="/tmp")
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    assert "DONE False" in r.stdout and r.stdout.strip().endswith("42"), r.stdout
