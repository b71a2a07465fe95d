"""Child-process bodies for the IPC tests (importable by spawned children)."""

import numpy as np


def import_add_and_reply(buf, event, queue):
    import nanocuda

    from test_ipc_gpu import ADD1  # noqa: PLC0415 - the child imports what it needs

    try:
        stream = nanocuda.Stream(device=buf.device)
        stream.wait(event)  # the exporter's writes are done before we read
        n = buf.size // 4
        k = nanocuda.compile(ADD1).get_kernel("add1")
        nanocuda.launch(stream, nanocuda.LaunchConfig(grid=(n + 255) // 256, block=256), k, buf.ptr, n)
        out = np.empty(n, np.float32)
        nanocuda.copy(out, buf, stream=stream)
        stream.sync()
        same_pool = buf.memory_resource.is_mapped
        buf.close()  # unmaps here only
        queue.put(("ok", float(out[:8].sum()), same_pool))
    except Exception as e:  # noqa: BLE001 - the parent asserts on the message
        queue.put(("error", f"{type(e).__name__}: {e}", False))


def import_garbage_and_reply(buf, queue):
    import nanocuda

    try:
        mr = buf.memory_resource
        desc = nanocuda.IPCBufferDescriptor.from_bytes(
            b"NCIPCB1\x00" + b"\xAB" * 64 + (4096).to_bytes(8, "little") + mr.uuid.bytes)
        try:
            nanocuda.Buffer.from_ipc_descriptor(mr, desc)
            queue.put(("imported garbage", "", 0.0))
            return
        except nanocuda.CudaError as e:
            first = str(e)
        # The process keeps working after the refusal.
        s = nanocuda.Stream(device=buf.device)
        out = np.empty(buf.size // 4, np.float32)
        nanocuda.copy(out, buf, stream=s)
        s.sync()
        queue.put(("refused", first, float(out[0])))
    except Exception as e:  # noqa: BLE001
        queue.put(("error", f"{type(e).__name__}: {e}", 0.0))


def keep(*objs):
    """A Pool initializer: the worker keeps its arguments (mapped resources) alive, registered."""


def fill_pickled(raw, value):
    """Unpickles a Buffer (its resource found in the registry) and fills it with `value`."""
    import pickle

    import nanocuda

    buf = pickle.loads(raw)
    s = nanocuda.Stream(device=buf.device)
    nanocuda.copy(buf, np.full(buf.size // 4, value, np.float32), stream=s)
    s.sync()
    mapped = buf.is_mapped
    buf.close()
    return mapped


def import_twice_and_check(mr, desc, oversized, queue):
    import nanocuda

    try:
        a = nanocuda.Buffer.from_ipc_descriptor(mr, desc)
        b = nanocuda.Buffer.from_ipc_descriptor(mr, desc)
        same = a.handle == b.handle
        try:
            nanocuda.Buffer.from_ipc_descriptor(mr, oversized)
            refused = "imported"
        except ValueError as e:
            refused = str(e)
        a.close()
        s = nanocuda.Stream(device=mr.device_id)
        nanocuda.memset(b, 7, stream=s)  # still mapped: the first close did not unmap it
        s.sync()
        b.close()
        nanocuda.Device(mr.device_id).sync()
        queue.put(("ok", same, refused))
    except Exception as e:  # noqa: BLE001
        queue.put(("error", f"{type(e).__name__}: {e}", ""))


def event_properties(event, queue):
    import nanocuda

    try:
        s = nanocuda.Stream(device=0)
        s.wait(event)
        s.sync()
        queue.put((event.ipc_descriptor, event.is_ipc_enabled, event.is_timing_enabled,
                   event.is_blocking_sync, event.device, event.context))
    except Exception as e:  # noqa: BLE001
        queue.put(("error", f"{type(e).__name__}: {e}"))


def close_mapped_pool_first(mr, buf):
    """Closes the mapped resource while its imported Buffer is open, then the Buffer."""
    import nanocuda

    assert mr.is_mapped and buf.is_mapped
    mr.close()
    s = nanocuda.Stream(device=0)
    nanocuda.memset(buf, 1, stream=s)  # still mapped: the pool waits for it
    s.sync()
    buf.close()
    mr.close()
