"""Sharing pinned (host) pool Buffers with another process on a real GPU: a spawned child maps the pool, runs a kernel on the memory, the parent sees it."""

import multiprocessing as mp

import numpy as np
import pytest

import nanocuda

pytestmark = pytest.mark.gpu


def _ipc_pinned(device):
    if not device.properties.memory_pools_supported:
        pytest.skip("the device has no memory pools")
    try:
        return nanocuda.PinnedMemoryResource(
            options=nanocuda.PinnedMemoryResourceOptions(max_size=1 << 22, ipc_enabled=True))
    except nanocuda.CudaError as e:  # a driver or platform without host NUMA pools
        pytest.skip(f"no IPC-enabled host pool here: {e}")


def child_add1(mr, buf, event, queue):
    """Maps the pool (mr) and the buffer, adds 1 on the device after the parent's event, replies."""
    from test_ipc_gpu import ADD1  # noqa: PLC0415 - the child imports what it needs

    try:
        device = nanocuda.Device()
        device.set_current()
        stream = nanocuda.Stream(device=device)
        stream.wait(event)  # the exporter's writes are done
        n = buf.size // 4
        k = nanocuda.compile(ADD1).get_kernel("add1")
        nanocuda.launch(stream, nanocuda.LaunchConfig(grid=(n + 255) // 256, block=256), k, buf.ptr, n)
        out = np.empty(n, np.float32)
        nanocuda.copy(out, buf, stream=stream)
        stream.sync()
        state = (type(mr).__name__, mr.is_mapped, buf.memory_resource is mr, buf.is_host_accessible)
        buf.close()  # unmaps here only
        queue.put(("ok", float(out[:8].sum()), state))
    except Exception as e:  # noqa: BLE001 - the parent asserts on the message
        queue.put(("error", f"{type(e).__name__}: {e}", None))


def test_a_child_writes_the_parents_pinned_pool_memory(device):
    ctx = mp.get_context("spawn")
    mr = _ipc_pinned(device)
    assert mr.is_ipc_enabled and mr.numa_id >= 0 and mr.allocation_handle.handle >= 0
    stream = nanocuda.Stream(device=device)
    buf = mr.allocate(1 << 16, stream=stream)
    x = np.arange(buf.size // 4, dtype=np.float32)
    nanocuda.copy(buf, x, stream=stream)
    event = nanocuda.Event.create_ipc(device)
    event.record(stream)
    q = ctx.Queue()
    p = ctx.Process(target=child_add1, args=(mr, buf, event, q))
    p.start()
    status, total, state = q.get(timeout=120)
    p.join(60)
    assert status == "ok", total
    assert state == ("PinnedMemoryResource", True, True, True), state
    assert total == float((x[:8] + 1).sum())
    out = np.empty_like(x)  # zero copy: the child's kernel wrote our host memory
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(out, x + 1)
    buf.close()
    mr.close()


def test_pinned_pool_without_ipc_refuses_in_cuda_cores_words(device):
    if not device.properties.memory_pools_supported:
        pytest.skip("the device has no memory pools")
    mr = nanocuda.PinnedMemoryResource(options=nanocuda.PinnedMemoryResourceOptions(max_size=1 << 21))
    assert not mr.is_ipc_enabled and mr.numa_id == -1
    buf = mr.allocate(64, stream=device.default_stream)
    with pytest.raises(RuntimeError, match="Memory resource is not IPC-enabled"):
        _ = mr.allocation_handle
    with pytest.raises(RuntimeError, match="Memory resource is not IPC-enabled"):
        _ = buf.ipc_descriptor
    buf.close()
    device.sync()
    mr.close()


def test_an_in_process_import_of_a_pinned_pool_maps_its_buffer(device):
    # The driver maps a pool exported by this very process too (the child's path, in one process).
    mr = _ipc_pinned(device)
    stream = nanocuda.Stream(device=device)
    buf = mr.allocate(4096, stream=stream)
    nanocuda.memset(buf, 7, stream=stream)
    stream.sync()
    desc = buf.ipc_descriptor
    try:
        mapped = nanocuda.PinnedMemoryResource.from_allocation_handle(mr.allocation_handle.handle)
    except nanocuda.CudaError as e:
        pytest.skip(f"the driver does not map a pool in its own process: {e}")
    view = nanocuda.Buffer.from_ipc_descriptor(mapped, desc, stream=stream)
    out = np.empty(4096, np.uint8)
    nanocuda.copy(out, view, stream=stream)
    stream.sync()
    assert (out == 7).all()
    view.close()
    mapped.close()
    buf.close()
    mr.close()


def child_imports_twice_and_oversized(mr, desc, oversized, queue):
    """Imports one pinned buffer twice (one mapping, counted) and an oversized descriptor."""
    try:
        device = nanocuda.Device()
        device.set_current()
        first = nanocuda.Buffer.from_ipc_descriptor(mr, desc, stream=device.default_stream)
        second = nanocuda.Buffer.from_ipc_descriptor(mr, desc, stream=device.default_stream)
        same = first.handle == second.handle
        first.close()
        second.close()
        device.sync()
        try:
            nanocuda.Buffer.from_ipc_descriptor(mr, oversized, stream=device.default_stream)
            refused = (None, "")
        except Exception as e:  # noqa: BLE001 - the parent asserts on the type and message
            refused = (type(e).__name__, str(e))
        queue.put(("ok", same, refused))
    except Exception as e:  # noqa: BLE001
        queue.put(("error", f"{type(e).__name__}: {e}", None))


def test_a_child_imports_a_pinned_buffer_twice_and_refuses_an_oversized_descriptor(device):
    # cuda.core's memory_ipc duplicate-import and oversized-descriptor cases, for a host pool:
    # the second import is the first's mapping; a size past the mapping is a ValueError.
    ctx = mp.get_context("spawn")
    mr = _ipc_pinned(device)
    buf = mr.allocate(64, stream=device.default_stream)
    desc = buf.ipc_descriptor
    payload, _ = desc.__reduce__()[1]
    oversized = nanocuda.IPCBufferDescriptor._init(payload, 64 * 100)
    q = ctx.Queue()
    p = ctx.Process(target=child_imports_twice_and_oversized, args=(mr, desc, oversized, q))
    p.start()
    status, same, refused = q.get(timeout=120)
    p.join(60)
    assert status == "ok", same
    assert same and p.exitcode == 0
    assert refused[0] == "ValueError" and "exceeds the mapped allocation extent" in refused[1], refused
    buf.close()
    mr.close()
