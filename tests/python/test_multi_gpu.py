"""Two GPUs: peer access, peer copies, pools and virtual memory read from the peer."""

import numpy as np
import pytest

import nanocuda

pytestmark = pytest.mark.gpu

ADD1 = r'''
extern "C" __global__ void add1(float* x, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}'''


@pytest.fixture(scope="module")
def pair():
    if nanocuda.Device.count() < 2:
        pytest.skip(f"needs 2 GPUs, this machine has {nanocuda.Device.count()}")
    yield nanocuda.Device(0), nanocuda.Device(1)
    # A launch leaves its stream's context current (like the runtime); give device 0 back
    # so torch/CuPy tests that follow see "cuda" as device 0 again.
    nanocuda.Device(0).set_current()


@pytest.fixture(scope="module")
def add1():
    return nanocuda.compile(ADD1).get_kernel("add1")


def launch_add1(kernel, ptr, n, stream):
    # A raw address: the peer's memory, which the launch's device check would refuse as a
    # Buffer of another device.
    nanocuda.launch(stream, nanocuda.LaunchConfig(grid=(n + 255) // 256, block=256), kernel, ptr, n)
    nanocuda.Device(0).set_current()


def test_peer_access_is_idempotent(pair):
    d0, d1 = pair
    assert d0.can_access_peer(d1) and d1.can_access_peer(d0)
    for _ in range(2):
        d0.enable_peer_access(d1)
        d1.enable_peer_access(d0)
    for _ in range(2):
        d0.disable_peer_access(d1)
    d0.enable_peer_access(d1)


def test_peer_copy_both_ways(pair):
    d0, d1 = pair
    s0 = nanocuda.Stream(device=d0)
    n = 1 << 18
    x = np.random.rand(n).astype(np.float32)
    b0 = d0.allocate(4 * n, stream=s0)
    b1 = d1.allocate(4 * n, stream=nanocuda.Stream(device=d1))
    nanocuda.copy(b0, x, stream=s0)
    nanocuda.copy(b1, b0, stream=s0)
    nanocuda.memset(b0, 0, stream=s0)
    nanocuda.copy(b0, b1, stream=s0)
    out = np.empty_like(x)
    nanocuda.copy(out, b0, stream=s0)
    s0.sync()
    np.testing.assert_array_equal(out, x)


def test_pool_granted_to_the_peer(pair, add1):
    d0, d1 = pair
    mr = nanocuda.DeviceMemoryResource(d0, nanocuda.DeviceMemoryResourceOptions())
    assert mr.peer_accessible_by == []
    mr.peer_accessible_by = [d1]
    assert mr.peer_accessible_by == [1]
    s0, s1 = nanocuda.Stream(device=d0), nanocuda.Stream(device=d1)
    n = 1 << 16
    buf = mr.allocate(4 * n, stream=s0)
    x = np.arange(n, dtype=np.float32)
    nanocuda.copy(buf, x, stream=s0)
    s0.sync()
    launch_add1(add1, buf.ptr, n, s1)  # device 1's kernel writes device 0's pool
    s1.sync()
    out = np.empty_like(x)
    nanocuda.copy(out, buf, stream=s0)
    s0.sync()
    np.testing.assert_array_equal(out, x + 1)
    mr.peer_accessible_by = []
    assert mr.peer_accessible_by == []
    with pytest.raises(ValueError, match="the stream is on device 1 but the resource is on device 0"):
        mr.allocate(16, stream=s1)
    buf.close()


def test_virtual_memory_read_by_the_peer_after_growing(pair, add1):
    d0, d1 = pair
    mr = nanocuda.VirtualMemoryResource(d0, nanocuda.VirtualMemoryResourceOptions(reserve_size=256 << 20))
    s0, s1 = nanocuda.Stream(device=d0), nanocuda.Stream(device=d1)
    g = mr.granularity
    buf = mr.allocate(g, stream=s0)
    mr.add_peer(d1)
    mr.modify_allocation(buf, 2 * g)
    n = 2 * g // 4
    x = np.arange(n, dtype=np.float32)
    nanocuda.copy(buf, x, stream=s0)
    s0.sync()
    launch_add1(add1, buf.ptr, n, s1)  # both chunks, the grown one too, are granted
    s1.sync()
    out = np.empty_like(x)
    nanocuda.copy(out, buf, stream=s0)
    s0.sync()
    np.testing.assert_array_equal(out, x + 1)
    buf.close()


def test_managed_prefetch_to_the_second_device(pair):
    d0, d1 = pair
    mr = nanocuda.ManagedMemoryResource(d0)
    s1 = nanocuda.Stream(device=d1)
    buf = mr.allocate(1 << 20, stream=s1)
    mr.prefetch(buf, d1, stream=s1)
    s1.sync()
    buf.close()
