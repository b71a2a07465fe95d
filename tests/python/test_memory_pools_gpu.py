"""On a GPU: pinned and managed pools, their attributes, Buffer.fill patterns read back, foreign
memory classified by the driver, ManagedBuffer advice and prefetch (CPU side: test_memory_pools.py)."""

import ctypes

import numpy as np
import pytest

import nanocuda
from nanocuda import (Buffer, Host, ManagedBuffer, ManagedMemoryResource, ManagedMemoryResourceOptions,
                      PinnedMemoryResource, PinnedMemoryResourceOptions, _nanocuda, utils)

pytestmark = pytest.mark.gpu


def host_bytes(buf):
    return ctypes.string_at(int(buf.handle), buf.size)


def test_pinned_pool_fills_and_counts(device, stream):
    device.set_current()
    if not device.properties.host_memory_pools_supported:
        pytest.skip("the device has no host memory pools")
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=1 << 21))
    before = mr.attributes.used_mem_current
    b = mr.allocate(64, stream=stream)
    assert mr.attributes.used_mem_current >= before and b.device_id == -1 and b.is_host_accessible
    b.fill(b"\x34\x12", stream=stream)
    stream.sync()
    assert host_bytes(b) == b"\x34\x12" * 32
    b.fill(np.float32(1.0), stream=stream)
    stream.sync()
    assert host_bytes(b) == np.float32(1.0).tobytes() * 16
    b.close(stream)
    mr.close()


def test_managed_pool_prefetches(device, stream):
    device.set_current()
    if not device.properties.concurrent_managed_access:
        pytest.skip("the device has no concurrent managed access")
    mr = ManagedMemoryResource(ManagedMemoryResourceOptions())
    bufs = [mr.allocate(1 << 16, stream=stream) for _ in range(2)]
    assert all(isinstance(b, ManagedBuffer) for b in bufs)
    utils.prefetch_batch(stream, bufs, [Host(), device])
    stream.sync()
    where = [_nanocuda._internal.managed_range_attribute(b, "last_prefetch_location", "test") for b in bufs]
    assert where == [("host", 0), ("device", device.device_id)]
    b = bufs[0]
    # Advice on memory from a managed *pool*: the H100's r580 driver answers NOT_SUPPORTED
    # (advice on cuMemAllocManaged memory works: test_managed_ops and cuda.core's suite).
    # Either the advice holds, or nanocuda says which advice the driver refused.
    for name, value, check in (("read_mostly", True, lambda: b.read_mostly is True),
                               ("preferred_location", device, lambda: b.preferred_location == device)):
        try:
            setattr(b, name, value)
            assert check(), name
        except nanocuda.CudaError as e:
            assert "NOT_SUPPORTED" in str(e) and f"ManagedBuffer.{name}" in str(e), e
    for x in bufs:
        x.close(stream)
    mr.close()


def test_foreign_memory_is_classified(device, stream):
    device.set_current()
    a = (ctypes.c_byte * 20)()
    b = Buffer.from_handle(ctypes.addressof(a), 20, owner=a)
    assert b.is_host_accessible and not b.is_device_accessible and b.device_id == -1
    m = ManagedMemoryResource().allocate(64, stream=stream)
    v = Buffer.from_handle(m.handle, 64)
    assert v.is_host_accessible and v.is_device_accessible and v.__dlpack_device__() == (13, 0)
    d = device.allocate(64, stream=stream)
    w = Buffer.from_handle(d.handle, 64)
    assert w.is_device_accessible and not w.is_host_accessible and w.device_id == device.device_id
    with pytest.raises(ValueError, match="not a managed-memory allocation"):
        ManagedBuffer.from_handle(d.handle, 64).prefetch(device, stream=stream)
    stream.sync()
    m.close(stream)
    d.close(stream)
