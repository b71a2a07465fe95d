"""GraphMemoryResource cases for the mock driver (tools/mock_libcuda_gmem.h models capture-time
graph allocations and the device's graph-memory counters). Run by test_graph_memory_resource.py
in a process of its own. The counters are per process, so each case checks differences."""

import gc

import pytest

import nanocuda
from nanocuda import DeviceMemoryResource, GraphMemoryResource


@pytest.fixture
def device():
    return nanocuda.Device(0)


def counters(gmr):
    a = gmr.attributes
    return a.reserved_mem_current, a.reserved_mem_high, a.used_mem_current, a.used_mem_high


def test_one_resource_per_device(device):
    gmr = GraphMemoryResource(device)
    assert gmr is GraphMemoryResource(0) is GraphMemoryResource(device_id=device)
    assert isinstance(gmr, nanocuda.MemoryResource)
    assert gmr.device_id == 0 and gmr.is_device_accessible and not gmr.is_host_accessible
    assert "GraphMemoryResource(device 0)" in repr(gmr)
    gmr.close()  # nothing to close: the resource still works
    assert GraphMemoryResource(0) is gmr


def test_bad_device_arguments_are_clear():
    with pytest.raises(ValueError, match="^GraphMemoryResource: device 'zero' is not a device"):
        GraphMemoryResource("zero")
    with pytest.raises(TypeError, match="GraphMemoryResource"):
        GraphMemoryResource(1.5)
    with pytest.raises((ValueError, nanocuda.CudaError), match="GraphMemoryResource|device"):
        GraphMemoryResource(-3)


def test_allocate_outside_a_capture_is_a_runtime_error(device):
    gmr = GraphMemoryResource(device)
    with pytest.raises(RuntimeError, match=r"^GraphMemoryResource cannot perform memory operations on a "
                                           r"non-capturing stream\."):
        gmr.allocate(16, stream=device.create_stream())
    with pytest.raises(RuntimeError, match="non-capturing"):
        gmr.allocate(16)  # the legacy stream
    builder = device.create_graph_builder()
    with pytest.raises(RuntimeError, match="non-capturing"):
        gmr.allocate(16, stream=builder)  # not building yet


def test_allocate_in_a_capture_and_free_in_it(device):
    gmr = GraphMemoryResource(device)
    used = gmr.attributes.used_mem_current
    gb = device.create_graph_builder().begin_building()
    buf = gmr.allocate(1024, stream=gb)
    assert buf.size == 1024 and buf.handle != 0 and buf.memory_resource is gmr
    assert gmr.attributes.used_mem_current == used + 1024  # the mock counts at capture time
    buf.close()  # the allocating stream is the builder's: a free node of the same capture
    assert gmr.attributes.used_mem_current == used
    gb.end_building().complete()


def test_buffer_freed_after_the_capture_on_another_stream(device):
    gmr = GraphMemoryResource(device)
    used = gmr.attributes.used_mem_current
    gb = device.create_graph_builder().begin_building()
    bufs = [gmr.allocate(100, stream=gb) for _ in range(3)]
    gb.end_building()
    del gb
    gc.collect()
    assert gmr.attributes.used_mem_current == used + 300
    stream = device.create_stream()
    for b in bufs:
        b.close(stream=stream)
    assert gmr.attributes.used_mem_current == used


def test_a_dropped_buffer_frees_on_the_builders_stream(device):
    gmr = GraphMemoryResource(device)
    used = gmr.attributes.used_mem_current
    gb = device.create_graph_builder().begin_building()
    gmr.allocate(64, stream=gb)  # dropped at once: a free in the same capture
    assert gmr.attributes.used_mem_current == used
    gb.end_building()


def test_attributes_reset_trim_and_errors(device):
    gmr = GraphMemoryResource(device)
    gb = device.create_graph_builder().begin_building()
    buf = gmr.allocate(4096, stream=gb)
    gb.end_building()
    reserved, reserved_high, used, used_high = counters(gmr)
    assert reserved >= used >= 4096 and reserved_high >= reserved and used_high >= used
    with pytest.raises(AttributeError, match=r"attribute 'reserved_mem_current' .* is not writable"):
        gmr.attributes.reserved_mem_current = 0
    with pytest.raises(AttributeError, match=r"attribute 'used_mem_current' .* is not writable"):
        gmr.attributes.used_mem_current = 0
    with pytest.raises(AttributeError, match=r"^Attribute 'reserved_mem_high' may only be set to zero \(got 1\)\.$"):
        gmr.attributes.reserved_mem_high = 1
    with pytest.raises(AttributeError, match=r"^Attribute 'used_mem_high' may only be set to zero \(got 1\)\.$"):
        gmr.attributes.used_mem_high = 1
    with pytest.raises(TypeError, match="used_mem_high must be set to the int 0, got str"):
        gmr.attributes.used_mem_high = "0"
    buf.close(stream=device.create_stream())
    after_free = counters(gmr)
    assert after_free[2] == used - 4096 and after_free[0] == reserved  # freed, still reserved
    gmr.trim()
    assert gmr.attributes.reserved_mem_current == gmr.attributes.used_mem_current
    assert gmr.attributes.used_mem_high == used_high  # the marks survive the free and the trim
    gmr.attributes.used_mem_high = 0
    gmr.attributes.reserved_mem_high = 0
    assert gmr.attributes.used_mem_high == gmr.attributes.used_mem_current
    assert gmr.attributes.reserved_mem_high == gmr.attributes.reserved_mem_current
    r = repr(gmr.attributes)
    assert r.startswith("GraphMemoryResourceAttributes(reserved_mem_current=") and r.endswith(")")
    for name in ("reserved_mem_high=", "used_mem_current=", "used_mem_high="):
        assert name in r


def test_attributes_object_is_not_made_directly():
    with pytest.raises(RuntimeError, match="cannot be instantiated directly"):
        type(GraphMemoryResource(0).attributes)()


def test_device_memory_resource_refuses_a_capture(device):
    dmr = DeviceMemoryResource(device)
    dmr.allocate(1, stream=device.create_stream()).close()  # not capturing: fine
    gb = device.create_graph_builder().begin_building()
    rule = r"cannot perform memory operations on a capturing stream \(consider using GraphMemoryResource\)\."
    with pytest.raises(RuntimeError, match=r"^DeviceMemoryResource\(device 0.*" + rule):
        dmr.allocate(1, stream=gb)
    with pytest.raises(RuntimeError, match=rule):
        device.allocate(1, stream=gb)
    GraphMemoryResource(device).allocate(8, stream=gb).close()
    gb.end_building().complete()
    dmr.allocate(1, stream=device.create_stream()).close()  # after the capture: fine again
