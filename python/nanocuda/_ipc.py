"""Sending Buffers and Events to other processes through pickle (multiprocessing).

A Buffer from an IPC-enabled pool pickles as (the pool's file descriptor, wrapped in
multiprocessing's DupFd, so the receiving process gets its own duplicate through
SCM_RIGHTS; the pool's uuid; the buffer's descriptor bytes). The receiver maps the pool
once per process (keyed on the uuid) and the buffer with it: zero copy. Only pickling done
by multiprocessing can carry the descriptor (Process arguments, Queue/Pipe sends); start
the child with the "spawn" or "forkserver" method (a forked child cannot use CUDA).

Who frees what: the exporter owns the memory. A receiver's Buffer owns only its mapping
(closing it unmaps, never frees the exporter's memory); the exporter must keep its Buffer
alive until every receiver has closed theirs (wait on an IPC event or a message).
"""

from __future__ import annotations

import copyreg
import os

from . import _nanocuda


def _device_by_uuid(uuid: str, ordinal: int) -> "_nanocuda.Device":
    # CUDA_VISIBLE_DEVICES may number the devices differently in the receiver.
    d = _nanocuda.Device(ordinal) if ordinal < _nanocuda.Device.count() else None
    if d is not None and d.uuid == uuid:
        return d
    for i in range(_nanocuda.Device.count()):
        if _nanocuda.Device(i).uuid == uuid:
            return _nanocuda.Device(i)
    raise ValueError(f"IPC: device {uuid} (ordinal {ordinal} in the sender) is not visible in this process")


def _reduce_buffer(buf):
    mr = buf.memory_resource
    if not isinstance(mr, _nanocuda.DeviceMemoryResource) or not mr.is_ipc_enabled or mr.is_mapped:
        raise TypeError(
            "Buffer: only buffers allocated from a DeviceMemoryResource(device, "
            "DeviceMemoryResourceOptions(ipc_enabled=True)) can be sent to another process")
    from multiprocessing.reduction import DupFd

    handle = mr.get_allocation_handle()
    device = buf.device
    return _rebuild_buffer, (device.uuid, device.ordinal, handle.uuid, DupFd(handle.fd),
                             buf.get_ipc_descriptor().to_bytes(), buf.dtype, tuple(buf.shape))


def _rebuild_buffer(device_uuid, ordinal, pool_uuid, dup_fd, descriptor, dtype, shape):
    device = _device_by_uuid(device_uuid, ordinal)
    fd = dup_fd.detach()
    mr = _nanocuda.DeviceMemoryResource._find_mapped(pool_uuid)
    if mr is None:
        handle = _nanocuda.IPCAllocationHandle._adopt(fd, pool_uuid)
        try:
            mr = _nanocuda.DeviceMemoryResource.from_allocation_handle(device, handle)
        finally:
            handle.close()  # the driver holds its own reference to the pool
    else:
        os.close(fd)
    return _nanocuda.Buffer.from_ipc_descriptor(
        mr, _nanocuda.IPCBufferDescriptor.from_bytes(descriptor), dtype=dtype, shape=shape)


def _reduce_event(event):
    if not event.is_ipc_enabled:
        raise TypeError("Event: only events from Event.create_ipc() can be sent to another process")
    device = event.device
    return _rebuild_event, (device.uuid, device.ordinal, event.get_ipc_descriptor())


def _rebuild_event(device_uuid, ordinal, handle):
    return _nanocuda.Event.from_ipc_descriptor(handle, _device_by_uuid(device_uuid, ordinal))


def _reduce_allocation_handle(handle):
    from multiprocessing.reduction import DupFd

    return _rebuild_allocation_handle, (DupFd(handle.fd), handle.uuid)


def _rebuild_allocation_handle(dup_fd, uuid):
    return _nanocuda.IPCAllocationHandle._adopt(dup_fd.detach(), uuid)


def _rebuild_descriptor(raw: bytes):
    return _nanocuda.IPCBufferDescriptor.from_bytes(raw)


def register() -> None:
    """Registers the reducers with copyreg (no import of multiprocessing until a pickle)."""
    copyreg.pickle(_nanocuda.Buffer, _reduce_buffer)
    copyreg.pickle(_nanocuda.Event, _reduce_event)
    copyreg.pickle(_nanocuda.IPCAllocationHandle, _reduce_allocation_handle)
    copyreg.pickle(_nanocuda.IPCBufferDescriptor, lambda d: (_rebuild_descriptor, (d.to_bytes(),)))
