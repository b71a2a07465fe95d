"""On a GPU: reused Buffer instances hold correct, independent memory; set_deallocation_stream,
owner, is_managed and preferred_location with real memory (CPU side: test_memory_members.py)."""

import gc

import numpy as np
import pytest

import nanocuda

pytestmark = pytest.mark.gpu


def written(buf, value, stream):
    buf.fill(value, stream=stream)
    out = np.empty(buf.size, dtype=np.uint8)
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    return out


def test_reused_instances_hold_their_own_memory(device, stream):
    mr = device.memory_resource
    for _ in range(50):  # fills and drains the free list
        mr.allocate(1 << 20, stream).close()
    a = mr.allocate(4096, stream)
    b = device.allocate(4096, stream)
    assert a is not b and a.ptr != b.ptr
    assert (written(a, 7, stream) == 7).all() and (written(b, 9, stream) == 9).all()
    out = np.empty(4096, dtype=np.uint8)
    nanocuda.copy(out, a, stream=stream)
    stream.sync()
    assert (out == 7).all()  # writing b did not touch a
    del a  # freed by the destructor, instance kept
    gc.collect()
    c = mr.allocate(4096, stream)
    assert not c.is_closed and c.size == 4096 and (written(c, 3, stream) == 3).all()
    assert (written(b, 5, stream) == 5).all()
    b.close(); c.close()


def test_many_live_buffers_then_free(device, stream):
    bufs = [device.allocate(1 << 16, stream) for _ in range(64)]
    assert len({b.ptr for b in bufs}) == 64
    for i, b in enumerate(bufs):
        b.fill(i, stream=stream)
    stream.sync()
    for i, b in enumerate(bufs[:8]):
        assert (written(b, i, stream) == i).all()
    used = device.memory_resource.attributes.used_mem_current
    del bufs, b  # the loop variable holds the last buffer it saw
    gc.collect()
    stream.sync()
    assert device.memory_resource.attributes.used_mem_current <= used - 64 * (1 << 16)


def test_set_deallocation_stream_frees_on_the_new_stream(device):
    s1, s2 = nanocuda.Stream(device=device), nanocuda.Stream(device=device)
    b = device.allocate(1 << 20, s1)
    b.fill(1, stream=s1)
    s1.sync()  # the caller orders the work before the new stream, as the docs say
    b.set_deallocation_stream(s2)
    assert b.stream == s2
    b.close()  # on s2
    s2.sync()
    assert b.is_closed
    c = device.allocate(1 << 20, s1)
    c.set_deallocation_stream(s2)
    del c  # garbage collection frees on s2 too
    gc.collect()
    s2.sync()
    assert nanocuda.take_deferred_errors() == []


def test_owner_keeps_foreign_memory_alive(device, stream):
    src = device.allocate(1024, stream)
    src.fill(42, stream=stream)
    view = nanocuda.Buffer.from_handle(src.ptr, 1024, owner=src)
    assert view.owner is src and view.memory_resource is None
    stream.sync()
    del src  # the view's owner keeps it (and its memory) alive
    gc.collect()
    out = np.empty(1024, dtype=np.uint8)
    nanocuda.copy(out, view, stream=stream)
    stream.sync()
    assert (out == 42).all()
    assert (written(view, 8, stream) == 8).all()
    owner = view.owner
    view.close()  # a view: frees nothing; the owner still holds the memory
    assert not owner.is_closed
    owner.close()


def test_managed_preferred_location_and_is_managed(device, stream):
    if not device.properties.managed_memory:
        pytest.skip("this device has no managed memory")
    r = nanocuda.ManagedMemoryResource(device, nanocuda.ManagedMemoryResourceOptions(preferred_location=device.device_id))
    assert r.is_managed and r.preferred_location == ("device", device.device_id)
    b = r.allocate(1 << 20, stream)
    assert b.is_managed and b.is_host_accessible and not b.is_mapped
    assert (written(b, 6, stream) == 6).all()
    b.close(stream)
    h = nanocuda.ManagedMemoryResource(nanocuda.ManagedMemoryResourceOptions(preferred_location_type="host"))
    assert h.preferred_location == ("host", None)
    hb = h.allocate(4096, stream)
    assert (written(hb, 2, stream) == 2).all()
    hb.close(stream)
    assert not device.allocate(16, stream).is_managed


def test_allocation_handle_property_is_the_same_handle(device):
    pool = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
    try:
        h = pool.allocation_handle
        assert h is pool.allocation_handle or h.fd == pool.get_allocation_handle().fd
        assert h.uuid == pool.uuid
    finally:
        pool.close()
