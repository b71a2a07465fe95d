"""Sharing Buffers and Events with another process (one GPU is enough; spawned children)."""

import multiprocessing as mp

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
def ctx():
    return mp.get_context("spawn")


def test_buffer_and_event_pickle_into_a_child(ctx, device):
    import ipc_children

    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
    stream = nanocuda.Stream(device=device)
    buf = mr.allocate(1 << 20, stream=stream)
    x = np.arange(buf.size // 4, dtype=np.float32)
    nanocuda.copy(buf, x, stream=stream)
    event = nanocuda.Event.create_ipc(device)
    event.record(stream)
    q = ctx.Queue()
    p = ctx.Process(target=ipc_children.import_add_and_reply, args=(buf, event, q))
    p.start()
    status, total, mapped = q.get(timeout=120)
    p.join(60)
    assert status == "ok", total
    assert mapped and total == float((x[:8] + 1).sum())
    out = np.empty_like(x)  # zero copy: the child's kernel wrote our memory
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(out, x + 1)
    buf.close()  # the exporter frees after the importer closed its mapping
    mr.close()


def test_garbage_descriptor_is_refused_in_the_child(ctx, device):
    import ipc_children

    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
    stream = nanocuda.Stream(device=device)
    buf = mr.allocate(4096, stream=stream)
    nanocuda.memset(buf, 0, stream=stream)
    stream.sync()
    q = ctx.Queue()
    p = ctx.Process(target=ipc_children.import_garbage_and_reply, args=(buf, q))
    p.start()
    status, message, value = q.get(timeout=120)
    p.join(60)
    assert status == "refused", message
    assert "from_ipc_descriptor" in message and value == 0.0
    buf.close()


def test_in_process_map_of_a_closed_pool_fails_cleanly(device):
    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
    h = mr.get_allocation_handle()
    fd = h.fd
    mr.close()
    assert h.is_closed  # closing the pool closes its exported descriptor
    with pytest.raises(ValueError, match="closed"):
        nanocuda.DeviceMemoryResource.from_allocation_handle(device, h)
    assert fd >= 0


def test_a_pool_closed_under_open_buffers_outlives_them(device):
    # close() with Buffers open: the pool stays until the last one is freed (no free reaches a
    # destroyed pool); the resource refuses new work at once.
    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions(max_size=1 << 21, ipc_enabled=True))
    stream = nanocuda.Stream(device=device)
    bufs = [mr.allocate(64, stream=stream) for _ in range(4)]
    mr.close()
    mr.close()
    assert mr.is_closed
    with pytest.raises(ValueError, match="closed"):
        mr.allocate(64, stream=stream)
    x = np.arange(16, dtype=np.float32)
    for b in bufs:  # the memory is still usable until each Buffer closes
        nanocuda.copy(b, x, stream=stream)
    out = np.empty_like(x)
    nanocuda.copy(out, bufs[-1], stream=stream)
    stream.sync()
    np.testing.assert_array_equal(out, x)
    for b in bufs:
        b.close()
    stream.sync()


def test_a_pinned_pool_closed_under_an_open_buffer_outlives_it(device):
    mr = nanocuda.PinnedMemoryResource(options=nanocuda.PinnedMemoryResourceOptions(max_size=1 << 21))
    stream = nanocuda.Stream(device=device)
    buf = mr.allocate(64, stream=stream)
    mr.close()
    x = np.arange(16, dtype=np.float32)
    out = np.empty_like(x)
    nanocuda.copy(buf, x, stream=stream)
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(out, x)
    buf.close()  # frees, then destroys the pool close() left to it
    stream.sync()


def test_small_ipc_pools_allocate_again_and_again(device):
    # cuda.core's IPC tests make many 2 MiB IPC pools in one process; each must allocate.
    stream = nanocuda.Stream(device=device)
    for _ in range(40):
        mr = nanocuda.DeviceMemoryResource(
            device, nanocuda.DeviceMemoryResourceOptions(max_size=2 * 1024 * 1024, ipc_enabled=True))
        _ = mr.allocation_handle
        bufs = [mr.allocate(64, stream=stream) for _ in range(20)]
        for b in bufs:
            b.close()
        stream.sync()
        mr.close()


def test_a_child_closing_its_mapped_pool_first_is_safe(ctx, device):
    import ipc_children

    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
    buf = mr.allocate(1 << 16, stream=device.default_stream)
    for _ in range(2):
        p = ctx.Process(target=ipc_children.close_mapped_pool_first, args=(mr, buf))
        p.start()
        p.join(120)
        assert p.exitcode == 0, p.exitcode
    buf.close()
    mr.close()
