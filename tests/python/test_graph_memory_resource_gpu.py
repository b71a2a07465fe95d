"""GraphMemoryResource on a real GPU: memory allocated inside a captured graph is used by its
kernels and copies, freed in the graph or after it, the device's counters move, and
DeviceMemoryResource refuses a capture in every mode. Mock-driver cases: graph_memory_cases.py."""

import numpy as np
import pytest

import nanocuda
from nanocuda.graph import GraphCompleteOptions

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __global__ void add_one(unsigned char* a, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) a[i] += 1;
}
"""
N = 256
ONE = nanocuda.LaunchConfig(grid=1, block=64)


@pytest.fixture(scope="module")
def add_one():
    return nanocuda.compile(SOURCE).get_kernel("add_one")


@pytest.fixture
def dev():
    d = nanocuda.Device(0)
    d.set_current()
    if not d.properties.memory_pools_supported:
        pytest.skip("the device has no memory pools (graph memory needs them)")
    return d


def host_bytes(buf, stream):
    host = nanocuda.LegacyPinnedMemoryResource().allocate(buf.size)
    buf.copy_to(host, stream=stream)
    stream.sync()
    out = np.from_dlpack(host).copy()
    host.close()
    return out


@pytest.mark.parametrize("mode", ["global", "thread_local", "relaxed"])
def test_graph_allocation_used_and_freed_inside_the_graph(dev, add_one, mode):
    stream = dev.create_stream()
    out = nanocuda.DeviceMemoryResource(dev).allocate(N, stream=stream)
    out.fill(0, stream=stream)
    gmr = nanocuda.GraphMemoryResource(dev)
    gb = dev.create_graph_builder().begin_building(mode)
    tmp = gmr.allocate(N, stream=gb)
    tmp.copy_from(out, stream=gb)
    nanocuda.launch(gb, ONE, add_one, tmp, N)
    nanocuda.launch(gb, ONE, add_one, tmp, N)
    out.copy_from(tmp, stream=gb)
    tmp.close()  # a mem-free node: the builder's stream is still capturing
    graph = gb.end_building().complete()
    for expected in (2, 4):
        graph.upload(stream)
        graph.launch(stream)
        stream.sync()
        assert (host_bytes(out, stream) == expected).all()


def test_graph_allocation_outlives_the_launch_and_counters_move(dev, add_one):
    stream = dev.create_stream()
    gmr = nanocuda.GraphMemoryResource(dev)
    gmr.trim()
    gb = dev.create_graph_builder().begin_building()
    kept = gmr.allocate(N, stream=gb)
    kept.fill(7, stream=gb)
    nanocuda.launch(gb, ONE, add_one, kept, N)
    graph = gb.end_building().complete(GraphCompleteOptions(auto_free_on_launch=True))
    graph.launch(stream)
    stream.sync()
    assert (host_bytes(kept, stream) == 8).all()
    a = gmr.attributes
    assert a.used_mem_current >= N and a.reserved_mem_current >= a.used_mem_current
    assert a.used_mem_high >= a.used_mem_current and a.reserved_mem_high >= a.reserved_mem_current
    kept.close(stream=stream)  # graph memory freed outside its graph
    stream.sync()
    gmr.trim()
    gmr.attributes.used_mem_high = 0
    gmr.attributes.reserved_mem_high = 0
    with pytest.raises(AttributeError, match="may only be set to zero"):
        gmr.attributes.used_mem_high = 1


@pytest.mark.parametrize("mode", ["global", "thread_local", "relaxed"])
def test_capture_rules_of_both_resources(dev, mode):
    stream = dev.create_stream()
    gmr, dmr = nanocuda.GraphMemoryResource(dev), nanocuda.DeviceMemoryResource(dev)
    with pytest.raises(RuntimeError, match="non-capturing stream"):
        gmr.allocate(1, stream=stream)
    dmr.allocate(1, stream=stream).close()
    gb = dev.create_graph_builder().begin_building(mode)
    with pytest.raises(RuntimeError, match=r"capturing stream \(consider using GraphMemoryResource\)"):
        dmr.allocate(1, stream=gb)
    gmr.allocate(1, stream=gb)
    gb.end_building().complete()
