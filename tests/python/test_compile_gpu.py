"""Loading compiled code on a GPU: kernels, attributes, parameter layout, SAXPY end to end."""

import pytest

import nanocuda

SAXPY = r"""
extern "C" __global__ void saxpy(float a, float *x, float *y, float *out, size_t n) {
  size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n) out[tid] = a * x[tid] + y[tid];
}
template <int N> __global__ void fill(int* p) { p[threadIdx.x] = N; }
"""

pytestmark = pytest.mark.gpu


def test_load_kernel_attributes_and_layout(device):
    code = nanocuda.Program(SAXPY).compile("cubin", name_expressions=["fill<7>"])
    k = code.get_kernel("saxpy")
    assert k.name == "saxpy"
    assert k.param_layout == [(0, 4), (8, 8), (16, 8), (24, 8), (32, 8)]
    attrs = k.attributes
    assert attrs.num_registers > 0
    assert attrs.max_threads_per_block >= 256
    assert attrs.binary_version > 0 and attrs.ptx_version > 0
    assert k.occupancy.max_active_blocks_per_multiprocessor(256) > 0
    min_grid, block = k.occupancy.max_potential_block_size()
    assert min_grid > 0 and block > 0
    assert "saxpy" in code.kernel_names
    assert code.get_kernel("fill<7>").param_layout == [(0, 8)]
    k.set_max_dynamic_shared_memory(64 * 1024)
    assert k.attributes.max_dynamic_shared_size_bytes == 64 * 1024


def test_missing_kernel_lists_contents():
    code = nanocuda.compile(SAXPY)
    with pytest.raises(ValueError, match="saxpy"):
        code.get_kernel("nope")


def test_ptx_and_ltoir_load():
    assert len(nanocuda.compile(SAXPY, target="ptx").get_kernel("saxpy").param_layout) == 5
    assert len(nanocuda.compile(SAXPY, target="ltoir").get_kernel("saxpy").param_layout) == 5


def test_cluster_occupancy(device):
    if device.compute_capability[0] < 9:
        pytest.skip("clusters need sm_90+")
    k = nanocuda.compile(SAXPY).get_kernel("saxpy")
    assert k.occupancy.max_active_clusters((4, 1, 1), (128, 1, 1), (2, 1, 1)) > 0


@pytest.mark.skipif(not hasattr(nanocuda, "launch"), reason="needs nanocuda.launch (launch API)")
def test_saxpy_end_to_end(device, stream):
    np = pytest.importorskip("numpy")
    kernel = nanocuda.compile(SAXPY).get_kernel("saxpy")
    n = 1 << 20
    a = np.float32(2.5)
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    dx = nanocuda.Buffer(n * 4, stream=stream)
    dy = nanocuda.Buffer(n * 4, stream=stream)
    dout = nanocuda.Buffer(n * 4, stream=stream)
    nanocuda.copy(dx, x, stream=stream)
    nanocuda.copy(dy, y, stream=stream)
    block = 256
    config = nanocuda.LaunchConfig(grid=(n + block - 1) // block, block=block, shared_mem=0)
    nanocuda.launch(stream, config, kernel, a, dx, dy, dout, np.uint64(n))
    out = np.empty(n, dtype=np.float32)
    nanocuda.copy(out, dout, stream=stream)
    stream.sync()
    np.testing.assert_allclose(out, a * x + y, rtol=1e-6)
