"""Memory resources on one GPU: each resource, Device.memory_resource, bad input, events."""

import gc
import threading

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
def add1():
    return nanocuda.compile(ADD1).get_kernel("add1")


def run_add1(kernel, buf, n, stream):
    nanocuda.launch(stream, nanocuda.LaunchConfig(grid=(n + 255) // 256, block=256), kernel, buf, n)


def roundtrip(buf, kernel, stream):
    n = buf.size // 4
    x = np.arange(n, dtype=np.float32)
    nanocuda.copy(buf, x, stream=stream)
    run_add1(kernel, buf, n, stream)
    out = np.empty_like(x)
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(out, x + 1)


def test_default_resource_is_the_current_pool(device, stream, add1):
    mr = device.memory_resource
    assert isinstance(mr, nanocuda.DeviceMemoryResource) and not mr.is_handle_owned
    assert mr.is_device_accessible and not mr.is_host_accessible and mr.device_id == 0
    buf = device.allocate(4096, stream=stream)
    assert buf.memory_resource is mr and buf.size == 4096
    roundtrip(buf, add1, stream)
    b2 = nanocuda.Buffer(4096, stream=stream)
    assert b2.memory_resource is mr


def test_own_pool_attributes_trim_and_usage(device, stream, add1):
    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions(release_threshold=1 << 20))
    assert mr.is_handle_owned and not mr.is_ipc_enabled and mr.release_threshold == 1 << 20
    bufs = [mr.allocate(1 << 20, stream) for _ in range(4)]
    a = mr.attributes
    assert a.used_mem_current >= 4 << 20 and a.reserved_mem_current >= a.used_mem_current
    roundtrip(bufs[0], add1, stream)
    for b in bufs:
        mr.deallocate(b, stream=stream)
    stream.sync()
    assert mr.attributes.used_mem_current == 0 and mr.attributes.used_mem_high >= 4 << 20
    mr.trim_to(0)
    assert mr.attributes.reserved_mem_current == 0
    mr.close()
    with pytest.raises(ValueError, match="is closed"):
        mr.allocate(16, stream)


def test_double_free_and_use_after_close(device, stream):
    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions())
    b = mr.allocate(256, stream=stream)
    mr.deallocate(b, stream=stream)
    with pytest.raises(ValueError, match="already freed"):
        mr.deallocate(b, stream=stream)
    with pytest.raises(ValueError, match="closed"):
        b.ptr  # noqa: B018
    other = device.allocate(256, stream=stream)
    with pytest.raises(ValueError, match="was not allocated by"):
        mr.deallocate(other)
    other.close()


def test_huge_allocation_is_a_clean_oom(device, stream):
    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions())
    keep = mr.allocate(1 << 20, stream=stream)
    before = mr.attributes.used_mem_current
    with pytest.raises(nanocuda.CudaError, match=r"cannot allocate 1152921504606846976 bytes \(1 EiB\).*in use"):
        mr.allocate(2**60, stream=stream)
    assert mr.attributes.used_mem_current == before  # nothing leaked
    with pytest.raises(ValueError, match="size must be >= 0"):
        mr.allocate(-1, stream=stream)
    with pytest.raises(ValueError, match="size must be >= 0"):
        device.allocate(-1)
    roundtrip_ok = mr.allocate(4096, stream=stream)  # the process keeps working
    roundtrip_ok.close()
    keep.close()


def test_setting_the_device_resource_routes_allocate_and_buffer(device, stream):
    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions())
    device.memory_resource = mr
    try:
        assert device.allocate(1024, stream=stream).memory_resource is mr
        assert nanocuda.Buffer(1024, stream=stream).memory_resource is mr
        with pytest.raises(ValueError, match="cannot serve device 0"):
            device.memory_resource = nanocuda.PinnedMemoryResource()
    finally:
        device.memory_resource = None
    assert device.memory_resource is not mr and not device.memory_resource.is_handle_owned


def test_pinned_resource_is_host_memory(device, stream, add1):
    mr = nanocuda.PinnedMemoryResource()
    assert mr.is_host_accessible and mr.is_device_accessible and mr.device_id == -1
    buf = mr.allocate(4096, stream=stream)
    assert buf.__dlpack_device__() == (3, 0)  # kDLCUDAHost
    roundtrip(buf, add1, stream)  # kernels reach pinned memory through its mapping
    host = np.from_dlpack(buf) if hasattr(np, "from_dlpack") else None
    if host is not None:
        assert host.nbytes == 4096
    buf.close()


def test_managed_resource_prefetch_and_advise(device, stream, add1):
    mr = nanocuda.ManagedMemoryResource(device)
    buf = mr.allocate(1 << 16, stream=stream)
    roundtrip(buf, add1, stream)
    mr.advise(buf, "set_read_mostly")
    mr.advise(buf, "set_preferred_location", "cpu")
    mr.prefetch(buf, device, stream=stream)
    mr.prefetch(buf, "cpu", stream=stream)
    stream.sync()
    with pytest.raises(ValueError, match="is not a device"):
        mr.prefetch(buf, 64, stream=stream)
    with pytest.raises(ValueError, match="unknown advice"):
        mr.advise(buf, "go_fast")
    not_managed = device.allocate(4096, stream=stream)
    with pytest.raises(nanocuda.CudaError):
        mr.prefetch(not_managed, "cpu", stream=stream)
    buf.close()


def test_virtual_buffer_grows_in_place(device, stream, add1):
    mr = nanocuda.VirtualMemoryResource(device, nanocuda.VirtualMemoryResourceOptions(reserve_size=64 << 20))
    g = mr.granularity
    buf = mr.allocate(g, stream=stream)
    addr = buf.ptr
    x = np.arange(g // 4, dtype=np.float32)
    nanocuda.copy(buf, x, stream=stream)
    mr.modify_allocation(buf, 3 * g)
    assert buf.ptr == addr and buf.size == 3 * g and buf.shape == (3 * g,)
    run_add1(add1, buf, 3 * g // 4, stream)  # the new pages are mapped and writable
    out = np.empty(3 * g // 4, np.float32)
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(out[: g // 4], x + 1)
    with pytest.raises(ValueError, match="past the buffer's reservation"):
        mr.modify_allocation(buf, 128 << 20)
    assert mr.modify_allocation(buf, g) is buf and buf.size == 3 * g  # never shrinks (cuda.core)
    assert buf.ptr == addr  # still usable
    buf.close()
    with pytest.raises(ValueError, match="closed"):
        mr.modify_allocation(buf, 4 * g)


def test_python_subclass_allocates_through_the_pool(device, stream, add1):
    pool = nanocuda.DeviceMemoryResource(device)
    calls = []

    class Counting(nanocuda.MemoryResource):
        def allocate(self, size, stream=None):
            inner = pool.allocate(size, stream)
            ptr = inner.ptr
            calls.append(("alloc", size))
            self._keep[ptr] = inner
            return nanocuda.Buffer.from_handle(ptr, size, self, stream=stream)

        def deallocate(self, ptr, size, stream=None):
            calls.append(("free", size))
            self._keep.pop(ptr).close()

        is_device_accessible = property(lambda self: True)
        is_host_accessible = property(lambda self: False)
        device_id = property(lambda self: 0)

    mr = Counting()
    mr._keep = {}
    device.memory_resource = mr
    try:
        buf = device.allocate(4096, stream=stream)
        assert buf.memory_resource is mr
        roundtrip(buf, add1, stream)
        buf.close()
        b2 = nanocuda.Buffer(1024, stream=stream)  # the C++ path asks Python too
        del b2
        gc.collect()
    finally:
        device.memory_resource = None
    assert calls == [("alloc", 4096), ("free", 4096), ("alloc", 1024), ("free", 1024)]


def test_ipc_descriptors_need_an_ipc_pool(device, stream):
    buf = device.allocate(256, stream=stream)
    with pytest.raises(ValueError, match="ipc_enabled=True"):
        buf.get_ipc_descriptor()
    with pytest.raises(ValueError, match="not exportable"):
        device.memory_resource.get_allocation_handle()
    import pickle

    with pytest.raises(TypeError, match="ipc_enabled=True"):
        pickle.dumps(buf)


def test_ipc_pool_exports_in_process(device, stream):
    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
    buf = mr.allocate(4096, stream=stream)
    d = buf.get_ipc_descriptor()
    assert d.size == 4096 and d.pool_uuid == mr.uuid.bytes
    h = mr.get_allocation_handle()
    assert h.fd >= 0 and h.uuid == mr.uuid
    with pytest.raises(ValueError, match="must be mapped"):
        nanocuda.Buffer.from_ipc_descriptor(mr, d)
    buf.close()


def test_ipc_events_and_peer_checks_on_one_gpu(device):
    e = nanocuda.Event.create_ipc(device)
    assert e.is_ipc_enabled and len(e.get_ipc_descriptor()) == 64
    with pytest.raises(RuntimeError, match="not IPC-enabled"):
        nanocuda.Event(device=device).get_ipc_descriptor()
    with pytest.raises(ValueError, match="same device"):
        device.enable_peer_access(device)
    assert device.can_access_peer(device) is False
    if nanocuda.Device.count() == 1:
        with pytest.raises(ValueError, match="out of range|ordinal|device"):
            device.enable_peer_access(1)


def test_stream_of_another_device_is_named(device):
    if nanocuda.Device.count() < 2:
        pytest.skip("needs 2 GPUs: the check compares two devices")
    s1 = nanocuda.Stream(device=1)
    with pytest.raises(ValueError, match="the stream is on device 1 but the resource is on device 0"):
        device.memory_resource.allocate(16, stream=s1)


def in_new_thread(fn):
    """fn() in a new host thread (which has no current context); its exception re-raised here."""
    result, errors = [], []

    def run():
        try:
            result.append(fn())
        except Exception as e:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return result[0]


def test_allocate_and_free_in_a_thread_with_no_current_context(device, stream, add1):
    # On a created stream the pool calls need no current context (nanocuda reads none there);
    # on the legacy stream nanocuda makes the device's context current for the call. Both
    # allocate and free, and the memory works afterwards.
    mr = device.memory_resource

    def allocate_and_free():
        a = mr.allocate(4096, stream=stream)  # the thread's first CUDA call
        b = mr.allocate(4096)  # the legacy stream
        c = device.allocate(4096, stream=stream)
        a.close()
        b.close()
        return c

    buf = in_new_thread(allocate_and_free)
    roundtrip(buf, add1, stream)
    in_new_thread(buf.close)
    assert buf.is_closed
    stream.sync()
