"""Launches on a real GPU: every argument kind checked byte for byte, configs, graphs, threads."""

import ctypes
import struct
import threading

import numpy as np
import pytest

import nanocuda

pytestmark = pytest.mark.gpu

SOURCE = r"""
struct S12 { int a, b, c; };

// Writes every received argument's bytes to `out`, at the same offsets as its parameters.
extern "C" __global__ void echo(unsigned char* out, const void* p, int i, float f, double d,
                                char c, short s, S12 st, bool b, unsigned long long u) {
  auto put = [&](int offset, const void* src, int n) {
    for (int k = 0; k < n; ++k) out[offset + k] = static_cast<const unsigned char*>(src)[k];
  };
  put(0, &p, 8); put(8, &i, 4); put(12, &f, 4); put(16, &d, 8); put(24, &c, 1);
  put(26, &s, 2); put(28, &st, 12); put(40, &b, 1); put(48, &u, 8);
}

extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void increment(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

extern "C" __global__ void big_shared(int* out, int n) {
  extern __shared__ int smem[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) smem[i] = i * 3;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = smem[n - 1 - i];
}

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void cluster_info(int* out) {
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) {
    out[blockIdx.x * 2] = cluster.num_blocks();
    out[blockIdx.x * 2 + 1] = cluster.block_rank();
  }
}

extern "C" __global__ void grid_sum(int* partial, int* total) {
  cg::grid_group grid = cg::this_grid();
  if (threadIdx.x == 0) partial[blockIdx.x] = blockIdx.x + 1;
  grid.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int s = 0;
    for (int k = 0; k < gridDim.x; ++k) s += partial[k];
    *total = s;
  }
}
"""


@pytest.fixture(scope="module")
def code():
    return nanocuda.compile(SOURCE)


def to_host(buf, dtype, stream):
    out = np.zeros(buf.size // np.dtype(dtype).itemsize, dtype=dtype)
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    return out


def test_param_layout_matches_the_compiler(code):
    k = code.get_kernel("echo")
    assert [tuple(p) for p in k.param_layout] == [
        (0, 8), (8, 8), (16, 4), (20, 4), (24, 8), (32, 1), (34, 2), (36, 12), (48, 1), (56, 8)]


@pytest.mark.parametrize("path", ["launch", "bound"])
def test_every_argument_kind_arrives_byte_for_byte(code, stream, path):
    k = code.get_kernel("echo")
    out = nanocuda.Buffer(64, stream=stream)
    nanocuda.memset(out, 0, stream=stream)
    args = (out, 0x1234_5678_9ABC, -7, 1.5, -2.25, np.int8(-3), ctypes.c_short(-300),
            struct.pack("<iii", 1, -2, 3), True, 2**64 - 5)
    config = nanocuda.LaunchConfig(grid=1, block=1)
    if path == "launch":
        nanocuda.launch(stream, config, k, *args)
    else:
        k.bind(config, stream=stream)(*args)
    got = to_host(out, np.uint8, stream).tobytes()
    assert struct.unpack_from("<Q", got, 0)[0] == 0x1234_5678_9ABC
    assert struct.unpack_from("<i", got, 8)[0] == -7
    assert struct.unpack_from("<f", got, 12)[0] == 1.5
    assert struct.unpack_from("<d", got, 16)[0] == -2.25
    assert struct.unpack_from("<b", got, 24)[0] == -3
    assert struct.unpack_from("<h", got, 26)[0] == -300
    assert struct.unpack_from("<iii", got, 28) == (1, -2, 3)
    assert got[40] == 1
    assert struct.unpack_from("<Q", got, 48)[0] == 2**64 - 5


def test_wrong_arguments_never_launch(code, stream):
    k = code.get_kernel("add")
    config = nanocuda.LaunchConfig(grid=1, block=32)
    buf = nanocuda.Buffer(128, stream=stream)
    with pytest.raises(TypeError, match="kernel 'add' takes 4 arguments, got 3"):
        nanocuda.launch(stream, config, k, buf, buf, buf)
    with pytest.raises(ValueError, match="kernel 'add', parameter 3: expects 4 bytes, got 8"):
        nanocuda.launch(stream, config, k, buf, buf, buf, np.int64(4))
    with pytest.raises(ValueError, match="expected device memory"):
        nanocuda.launch(stream, config, k, buf, np.zeros(4, np.float32), buf, 4)


@pytest.mark.needs_torch
def test_torch_tensors_and_cpu_tensor_error(code, stream):
    import torch

    n = 1000
    a = torch.rand(n, device="cuda")
    b = torch.rand(n, device="cuda")
    c = torch.empty(n, device="cuda")
    torch.cuda.synchronize()
    launcher = code.get_kernel("add").bind(nanocuda.LaunchConfig(grid=4, block=256), stream=stream)
    launcher(a, b, c, n)
    stream.sync()
    assert torch.allclose(c, a + b)
    with pytest.raises(ValueError, match="expected device memory.*the CPU"):
        launcher(a, b.cpu(), c, n)


@pytest.mark.needs_torch
def test_launch_on_a_torch_stream(code):
    import torch

    ts = torch.cuda.Stream()
    x = torch.zeros(256, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    k = code.get_kernel("increment")
    nanocuda.launch(ts, nanocuda.LaunchConfig(grid=1, block=256), k, x, 256)
    ts.synchronize()
    assert int(x.sum()) == 256


def test_large_dynamic_shared_memory(code, stream, device):
    n = 100 * 1024 // 4  # 100 KB: above the 48 KB default, so the limit is raised for us
    assert device.max_shared_memory_per_block_optin >= n * 4
    out = nanocuda.Buffer(n * 4, stream=stream)
    k = code.get_kernel("big_shared")
    nanocuda.launch(stream, nanocuda.LaunchConfig(grid=1, block=256, shared_mem=n * 4), k, out, n)
    got = to_host(out, np.int32, stream)
    assert np.array_equal(got, (np.arange(n)[::-1] * 3).astype(np.int32))


def test_thread_block_clusters(code, stream, device):
    if device.compute_capability[0] < 9:
        pytest.skip("clusters need sm_90")
    out = nanocuda.Buffer(8 * 2 * 4, stream=stream)
    k = code.get_kernel("cluster_info")
    # grid counts clusters (cuda.core's rule): 2 clusters of 4 blocks
    nanocuda.launch(stream, nanocuda.LaunchConfig(grid=2, block=32, cluster=4), k, out)
    got = to_host(out, np.int32, stream).reshape(8, 2)
    assert (got[:, 0] == 4).all()
    assert list(got[:, 1]) == [0, 1, 2, 3, 0, 1, 2, 3]


def test_cooperative_launch(code, stream, device):
    partial = nanocuda.Buffer(64 * 4, stream=stream)
    total = nanocuda.Buffer(4, stream=stream)
    k = code.get_kernel("grid_sum")
    blocks = min(64, device.multiprocessor_count)
    nanocuda.launch(stream, nanocuda.LaunchConfig(grid=blocks, block=64, cooperative=True), k,
                    partial, total)
    assert to_host(total, np.int32, stream)[0] == blocks * (blocks + 1) // 2


def test_programmatic_dependent_launch_runs(code, stream):
    x = nanocuda.Buffer(256 * 4, stream=stream)
    nanocuda.memset(x, 0, stream=stream)
    k = code.get_kernel("increment")
    for _ in range(3):
        nanocuda.launch(stream, nanocuda.LaunchConfig(grid=1, block=256, pdl=True), k, x, 256)
    assert (to_host(x, np.int32, stream) == 3).all()


def test_graph_capture_replay_and_update(code, stream):
    n = 256
    x = nanocuda.Buffer(n * 4, stream=stream)
    y = nanocuda.Buffer(n * 4, stream=stream)
    nanocuda.memset(x, 0, stream=stream)
    nanocuda.memset(y, 0, stream=stream)
    launcher = code.get_kernel("increment").bind(nanocuda.LaunchConfig(grid=1, block=n), stream=stream)
    graph = nanocuda.Graph()
    with graph.capture(stream):
        launcher(x, n)
        launcher(x, n)
    assert graph.kernel_nodes == ["increment", "increment"]
    stream.sync()
    assert (to_host(x, np.int32, stream) == 0).all()  # capture does not run the work
    for _ in range(5):
        graph.launch()
    assert (to_host(x, np.int32, stream) == 10).all()
    graph.update(1, y, n)  # the second launch now increments y
    graph.launch()
    assert (to_host(x, np.int32, stream) == 11).all()
    assert (to_host(y, np.int32, stream) == 1).all()
    with pytest.raises(ValueError, match="expects 4 bytes, got 8"):
        graph.update(0, x, np.int64(n))
    with pytest.raises(IndexError, match="no kernel node 2"):
        graph.update(2, x, n)


def test_launcher_reentered_while_packing_keeps_both_launches_right(code, stream):
    """Packing may run Python code (here a __cuda_array_interface__ property) that calls the
    same Launcher again, as another thread could after a GIL switch: each launch must get its
    own arguments, not a mix written into one shared buffer."""
    n = 1000
    add = code.get_kernel("add").bind(nanocuda.LaunchConfig(grid=4, block=256), stream=stream)
    rng = np.random.default_rng()
    host = {k: rng.random(n, dtype=np.float32) for k in "abxy"}
    dev = {k: nanocuda.Buffer(4 * n, stream=stream, dtype="float32") for k in "abcxyz"}
    for k, v in host.items():
        nanocuda.copy(dev[k], v, stream=stream)

    class Sneaky:
        # State on the instance, not in a closure: the class is a reference cycle that only
        # the garbage collector frees, and it must not keep the buffers alive.
        def __init__(self, launch, nested_args, target):
            self.launch, self.nested_args, self.target, self.calls = launch, nested_args, target, 0

        @property
        def __cuda_array_interface__(self):
            self.calls += 1
            self.launch(*self.nested_args)  # nested launch, mid-pack of the outer one
            return self.target.__cuda_array_interface__

    sneaky = Sneaky(add, (dev["x"], dev["y"], dev["z"], n), dev["b"])
    add(dev["a"], sneaky, dev["c"], n)
    assert sneaky.calls >= 1
    c, z = to_host(dev["c"], np.float32, stream), to_host(dev["z"], np.float32, stream)
    np.testing.assert_array_equal(c, host["a"] + host["b"])
    np.testing.assert_array_equal(z, host["x"] + host["y"])


def test_eight_threads_launch_concurrently(code, device):
    k = code.get_kernel("increment")
    n, rounds, errors = 4096, 200, []

    def work(t):
        try:
            s = nanocuda.Stream(device=device)
            buf = nanocuda.Buffer(n * 4, stream=s)
            nanocuda.memset(buf, 0, stream=s)
            launcher = k.bind(nanocuda.LaunchConfig(grid=n // 256, block=256), stream=s)
            for r in range(rounds):
                if r % 2:
                    launcher(buf, n)
                else:
                    nanocuda.launch(s, nanocuda.LaunchConfig(grid=n // 256, block=256), k, buf, n)
            out = np.zeros(n, dtype=np.int32)
            nanocuda.copy(out, buf, stream=s)
            s.sync()
            assert (out == rounds).all(), f"thread {t}"
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
