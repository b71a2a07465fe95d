"""Sending memory resources, Buffers and Events to other processes through pickle, as cuda.core does.

Two picklers, two meanings (cuda.core's design):
- multiprocessing's pickler (Process arguments, Queue/Pipe sends, Pool tasks) sends an
  IPC-enabled DeviceMemoryResource or PinnedMemoryResource deeply: its pool's file descriptor travels by SCM_RIGHTS
  (DupFd) and the receiver maps the pool once (DeviceMemoryResource.from_allocation_handle,
  which registers the mapping under the pool's uuid; a second send finds it).
- plain pickle.dumps sends a resource by its uuid only: the receiver must have it registered
  already (it was sent through multiprocessing before), else unpickling raises RuntimeError
  "Memory resource <uuid> was not found".
A Buffer pickles as (its resource, its IPCBufferDescriptor), so it follows the pickler used.
An IPCAllocationHandle goes only through multiprocessing (a file descriptor is not data).

Who frees what: the exporter owns the memory. A receiver's Buffer owns only its mapping
(closing it unmaps, never frees the exporter's memory); the exporter must keep its Buffer
alive until every receiver has closed theirs (wait on an IPC event or a message).
"""

from __future__ import annotations

import copyreg
import multiprocessing.reduction as mp_reduction

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


def _reduce_device(device):
    return _device_by_uuid, (device.uuid, device.ordinal)


# The pool kinds that share memory with other processes (one IPC implementation in the core).
_POOL_KINDS = (_nanocuda.DeviceMemoryResource, _nanocuda.PinnedMemoryResource)


def _ipc_resource(obj, what: str):
    mr = obj if isinstance(obj, _POOL_KINDS) else obj.memory_resource
    if not isinstance(mr, _POOL_KINDS) or not mr.is_ipc_enabled:
        raise TypeError(
            f"{what}: only an IPC-enabled DeviceMemoryResource or PinnedMemoryResource "
            "(DeviceMemoryResourceOptions(ipc_enabled=True), PinnedMemoryResourceOptions(ipc_enabled=True)) "
            "and its buffers can be sent to another process")
    return mr


def _registered(uuid):
    """This process's mapping of pool `uuid`, of either kind, or None. One pool is mapped once
    per process: a pool the receiver mapped through the other class (cuda.core lets
    DeviceMemoryResource.from_allocation_handle map a pinned pool's handle) serves its Buffers."""
    return None if uuid is None else _nanocuda.DeviceMemoryResource._find_mapped(uuid.bytes)


def _from_registry(uuid):
    mr = _registered(uuid)
    return mr if mr is not None else _nanocuda.DeviceMemoryResource.from_registry(uuid)


def _pinned_from_registry(uuid):
    mr = _registered(uuid)
    return mr if mr is not None else _nanocuda.PinnedMemoryResource.from_registry(uuid)


def _registry_lookup(mr):
    return _pinned_from_registry if isinstance(mr, _nanocuda.PinnedMemoryResource) else _from_registry


def _reduce_resource(mr):
    """Plain pickle: the resource by uuid; the receiver finds its mapping in the registry."""
    _ipc_resource(mr, f"pickle({type(mr).__name__})")
    return _registry_lookup(mr), (mr.uuid,)


def _deep_reduce_resource(mr):
    """multiprocessing: the pool itself, mapped (once) and registered in the receiver."""
    _ipc_resource(mr, f"pickle({type(mr).__name__})")
    if mr.is_mapped:  # a mapping cannot be exported again; the receiver needs its own send
        return _registry_lookup(mr), (mr.uuid,)
    if isinstance(mr, _nanocuda.PinnedMemoryResource):
        return _rebuild_pinned_resource, (mr.allocation_handle,)
    return _rebuild_resource, (_nanocuda.Device(mr.device_id), mr.allocation_handle)


def _rebuild_resource(device, handle):
    try:
        mr = _registered(handle.uuid)
        return mr if mr is not None else _nanocuda.DeviceMemoryResource.from_allocation_handle(device, handle)
    finally:
        handle.close()  # the driver keeps its own reference to the pool


def _rebuild_pinned_resource(handle):
    try:  # host memory: the receiver's current device gives the context
        mr = _registered(handle.uuid)
        return mr if mr is not None else _nanocuda.PinnedMemoryResource.from_allocation_handle(handle)
    finally:
        handle.close()


def _reduce_buffer(buf):
    mr = _ipc_resource(buf, "pickle(Buffer)")
    return _rebuild_buffer, (mr, buf.get_ipc_descriptor(), buf.dtype, tuple(buf.shape))


def _rebuild_buffer(mr, descriptor, dtype, shape):
    return _nanocuda.Buffer.from_ipc_descriptor(mr, descriptor, dtype=dtype, shape=shape)


def _reduce_event(event):
    if not event.is_ipc_enabled:
        raise TypeError("pickle(Event): only IPC-enabled events (stream.record(options=EventOptions("
                        "ipc_enabled=True)) or Event.create_ipc()) can be sent to another process")
    device = event.device
    if device is None:
        raise TypeError("pickle(Event): an event opened from another process cannot be sent on; "
                        "send the exporter's event again")
    return _rebuild_event, (device.uuid, device.ordinal, event.get_ipc_descriptor(), event.is_blocking_sync)


def _rebuild_event(device_uuid, ordinal, handle, blocking_sync=False):
    return _nanocuda.Event.from_ipc_descriptor(handle, _device_by_uuid(device_uuid, ordinal),
                                               blocking_sync=blocking_sync)


def _descriptor_from_payload(payload, size):
    return _nanocuda.IPCBufferDescriptor._init(payload, size)


def _refuse_plain_handle(handle):
    raise TypeError("pickle(IPCAllocationHandle): a file descriptor is sent only through multiprocessing "
                    "(Process arguments, Queue, Pipe), which passes it to the receiver by SCM_RIGHTS")


def _reduce_allocation_handle(handle):
    return _rebuild_allocation_handle, (mp_reduction.DupFd(handle.fd), handle.uuid)


def _rebuild_allocation_handle(dup_fd, uuid):
    return _nanocuda.IPCAllocationHandle._init(dup_fd.detach(), uuid)


def register() -> None:
    """Registers the reducers: copyreg for plain pickle, multiprocessing's for its own pickler."""
    if "__reduce__" not in vars(_nanocuda.Device) and "__getstate__" not in vars(_nanocuda.Device):
        copyreg.pickle(_nanocuda.Device, _reduce_device)
    copyreg.pickle(_nanocuda.Buffer, _reduce_buffer)
    copyreg.pickle(_nanocuda.Event, _reduce_event)
    copyreg.pickle(_nanocuda.DeviceMemoryResource, _reduce_resource)
    copyreg.pickle(_nanocuda.PinnedMemoryResource, _reduce_resource)
    copyreg.pickle(_nanocuda.IPCAllocationHandle, _refuse_plain_handle)
    mp_reduction.register(_nanocuda.DeviceMemoryResource, _deep_reduce_resource)
    mp_reduction.register(_nanocuda.PinnedMemoryResource, _deep_reduce_resource)
    mp_reduction.register(_nanocuda.IPCAllocationHandle, _reduce_allocation_handle)
