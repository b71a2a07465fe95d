"""Issue 25 on the GPU: the real-use checks that need a driver (IPC events made and pickled on
a thread with no current context, IPC pools sent to spawned children and worker pools the
way cuda.core's IPC tests send them, event timing without a record, DLPack streams)."""

import multiprocessing as mp
import pickle
import threading

import numpy as np
import pytest

import nanocuda

pytestmark = pytest.mark.gpu


def on_fresh_thread(fn):
    """fn() on a new thread, which has no CUDA context current; returns its result or raises."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised on the caller's thread
            box["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join(60)
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_ipc_event_exports_on_a_thread_with_no_context(device):
    event = nanocuda.Event.create_ipc(device)
    raw = on_fresh_thread(lambda: event.get_ipc_descriptor())
    assert isinstance(raw, bytes) and len(raw) == 64
    assert len(on_fresh_thread(lambda: pickle.dumps(event))) > 64
    made = on_fresh_thread(lambda: nanocuda.Event.create_ipc(device))
    assert made.is_ipc_enabled and len(on_fresh_thread(lambda: made.get_ipc_descriptor())) == 64


def test_ipc_buffer_exports_on_a_thread_with_no_context(device):
    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
    buf = mr.allocate(256, stream=nanocuda.Stream(device=device))
    assert len(on_fresh_thread(lambda: buf.get_ipc_descriptor().to_bytes())) > 64
    buf.close()
    mr.close()


def test_elapsed_time_names_the_event_never_recorded(device):
    s = nanocuda.Stream(device=device)
    opts = nanocuda.EventOptions(timing_enabled=True)
    a, b = device.create_event(opts), device.create_event(opts)
    with pytest.raises(RuntimeError, match="^Both Events must be recorded .*the start Event .* was never recorded"):
        b - a
    s.record(a)
    with pytest.raises(RuntimeError, match="the end Event .* was never recorded"):
        b - a
    s.record(b)
    s.sync()
    assert b - a >= 0.0


def _child_noop(*args):
    pass


def _fill_pickled(args):
    mr, raw = args  # the pool arrives through multiprocessing first (registered by uuid) ...
    buf = pickle.loads(raw)  # ... so a plain-pickled Buffer of it finds it, as in cuda.core
    nanocuda.memset(buf, 7, stream=nanocuda.Stream(device=buf.device))
    nanocuda.Device(buf.device.ordinal).sync()
    buf.close()
    return buf.size


def _fill_sent(buf):
    nanocuda.memset(buf, 9, stream=nanocuda.Stream(device=buf.device))
    nanocuda.Device(buf.device.ordinal).sync()
    buf.close()
    return buf.size


def test_allocation_handle_goes_to_children_and_the_pool_closes(device):
    ctx = mp.get_context("spawn")
    mr = nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions(max_size=1 << 21, ipc_enabled=True))
    handle = mr.allocation_handle
    for _ in range(2):
        p = ctx.Process(target=_child_noop, args=(handle,))
        p.start()
        p.join(120)
        assert p.exitcode == 0
    del handle
    mr.close()
    assert mr.is_closed


def test_buffers_through_a_worker_pool(device):
    ctx = mp.get_context("spawn")
    mrs = [nanocuda.DeviceMemoryResource(device, nanocuda.DeviceMemoryResourceOptions(max_size=1 << 21, ipc_enabled=True))
           for _ in range(2)]
    s = nanocuda.Stream(device=device)
    bufs = [mrs[i % 2].allocate(64, stream=s) for i in range(8)]
    s.sync()
    with ctx.Pool(2) as pool:
        assert pool.map(_fill_pickled, [(mrs[i % 2], pickle.dumps(b)) for i, b in enumerate(bufs[:4])]) == [64] * 4
        assert pool.map(_fill_sent, bufs[4:]) == [64] * 4
    for i, b in enumerate(bufs):
        host = np.empty(64, np.uint8)
        nanocuda.copy(host, b, stream=s)
        s.sync()
        assert (host == (7 if i < 4 else 9)).all(), i
        b.close()
    device.sync()
    for mr in mrs:
        mr.close()


@pytest.mark.needs_torch
def test_dlpack_orders_a_real_consumer_stream(device):
    import torch

    buf = nanocuda.Buffer(1024, stream=nanocuda.Stream(device=device))
    ts = torch.cuda.Stream()
    with torch.cuda.stream(ts):  # torch passes its current stream's handle: ordered, no error
        t = torch.from_dlpack(buf)
    assert t.numel() == 1024
    for legal in (None, -1, 1, 2, ts.cuda_stream):
        buf.__dlpack__(stream=legal)
    with pytest.raises(ValueError, match="ambiguous"):
        buf.__dlpack__(stream=0)


def test_raw_free_of_a_live_buffer_is_refused_and_its_close_frees_once(device):
    # The real pool: the refused raw free leaves the Buffer usable, its close is the one free,
    # and no deferred error (a double free) shows up afterwards.
    mr = device.memory_resource
    s = nanocuda.Stream(device=device)
    b = mr.allocate(1 << 20, s)
    with pytest.raises(ValueError, match=r"MemoryResource.deallocate\(0x[0-9a-f]+, \.\.\.\): that address belongs to a live Buffer"):
        mr.deallocate(b.ptr, 1 << 20, s)
    nanocuda.memset(b, 7, stream=s)
    b.close(s)
    s.sync()
    assert nanocuda.take_deferred_errors() == []
