"""IPC the way cuda.core's memory_ipc tests use it: the registry, deep pickling through
multiprocessing, duplicate imports, oversized descriptors, IPC event properties and safe
closing (one GPU; spawned children). The CPU half runs against the mock driver: test_ipc_mock.py."""

import multiprocessing as mp
import pickle
import threading

import numpy as np
import pytest

import nanocuda

pytestmark = pytest.mark.gpu

OPTS = nanocuda.DeviceMemoryResourceOptions(max_size=1 << 21, ipc_enabled=True)


@pytest.fixture(scope="module")
def ctx():
    return mp.get_context("spawn")


def test_plain_pickled_buffers_find_their_resource_in_a_worker_pool(ctx, device):
    import ipc_children

    mrs = [nanocuda.DeviceMemoryResource(device, OPTS) for _ in range(2)]
    bufs = [mrs[i % 2].allocate(256) for i in range(6)]
    with ctx.Pool(2, initializer=ipc_children.keep, initargs=(mrs,)) as pool:
        mapped = pool.starmap(ipc_children.fill_pickled, [(pickle.dumps(b), float(i + 1)) for i, b in enumerate(bufs)])
    assert mapped == [True] * 6
    s = nanocuda.Stream(device=device)
    for i, b in enumerate(bufs):
        out = np.empty(64, np.float32)
        nanocuda.copy(out, b, stream=s)
        s.sync()
        assert (out == i + 1).all(), (i, out[:4])
        b.close()
    device.sync()
    for mr in mrs:
        mr.close()
        mr.close()  # idempotent


def test_a_buffer_imported_twice_stays_mapped_until_its_last_close(ctx, device):
    import ipc_children

    mr = nanocuda.DeviceMemoryResource(device, OPTS)
    buf = mr.allocate(4096)
    desc = buf.ipc_descriptor
    payload, size = desc.__reduce__()[1]
    oversized = nanocuda.IPCBufferDescriptor._init(payload, size * 100)
    q = ctx.Queue()
    p = ctx.Process(target=ipc_children.import_twice_and_check, args=(mr, desc, oversized, q))
    p.start()
    status, same, refused = q.get(timeout=120)
    p.join(60)
    assert status == "ok" and p.exitcode == 0, (same, refused, p.exitcode)
    assert same and "exceeds the mapped allocation extent" in refused, refused
    out = np.empty(4096, np.uint8)
    s = nanocuda.Stream(device=device)
    nanocuda.copy(out, buf, stream=s)
    s.sync()
    assert (out == 7).all()  # the child wrote through its second import
    buf.close()
    mr.close()


def test_an_ipc_event_reaches_a_child_with_its_properties(ctx, device):
    import ipc_children

    s = nanocuda.Stream(device=device)
    e = s.record(options={"ipc_enabled": True, "blocking_sync": True})
    q = ctx.Queue()
    p = ctx.Process(target=ipc_children.event_properties, args=(e, q))
    p.start()
    props = q.get(timeout=120)
    p.join(60)
    assert props == (e.ipc_descriptor, True, False, True, None, None), props
    with pytest.raises(TypeError, match="should not be re-recorded"):
        s.record(e)
    with pytest.raises(TypeError, match="cannot use timing"):
        s.record(options=nanocuda.EventOptions(ipc_enabled=True, timing_enabled=True))
    with pytest.raises(TypeError, match="must be bound"):
        device.create_event({"ipc_enabled": True})


def test_closing_is_idempotent_and_needs_no_current_context(device):
    mr = nanocuda.DeviceMemoryResource(device, OPTS)
    kept = mr.allocate(256)  # still open when the pool closes: freed later, safely
    handle = mr.allocation_handle
    errors = []

    def close_all():  # a fresh thread: no context current
        try:
            mr.close()
            mr.close()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=close_all)
    t.start()
    t.join()
    assert not errors, errors
    assert mr.is_closed and handle.is_closed
    kept.close()
    device.sync()
    with pytest.raises(ValueError, match="closed"):
        mr.allocate(64)
