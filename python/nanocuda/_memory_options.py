"""Options for the memory resources, as dataclasses (cuda.core's names), checked on creation."""

from __future__ import annotations

from dataclasses import dataclass, field, fields


def _check_size(owner: str, name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{owner}: {name} must be an int (bytes), got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{owner}: {name} must be >= 0, got {value}")


@dataclass
class DeviceMemoryResourceOptions:
    """Options for a new pool: ``DeviceMemoryResource(0, DeviceMemoryResourceOptions(ipc_enabled=True))``.

    ipc_enabled: buffers can be sent to other processes; max_size: the pool's limit in bytes
    (0: the driver's default); release_threshold: bytes the pool keeps reserved across syncs.
    """

    ipc_enabled: bool = False
    max_size: int = 0
    release_threshold: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.ipc_enabled, bool):
            raise TypeError("DeviceMemoryResourceOptions: ipc_enabled must be a bool, got "
                            f"{type(self.ipc_enabled).__name__}")
        _check_size("DeviceMemoryResourceOptions", "max_size", self.max_size)
        _check_size("DeviceMemoryResourceOptions", "release_threshold", self.release_threshold)


@dataclass
class PinnedMemoryResourceOptions:
    """Options for a new pinned host pool: ``PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=1 << 20))``.

    ipc_enabled: buffers can be sent to other processes (the pool then lives on a host NUMA
    node: numa_id, or the current device's nearest); max_size: the pool's limit in bytes (0:
    the driver's default); numa_id: the host NUMA node (None: the OS places the pages).
    """

    ipc_enabled: bool = False
    max_size: int = 0
    numa_id: int | None = None

    def __post_init__(self) -> None:
        owner = "PinnedMemoryResourceOptions"
        if not isinstance(self.ipc_enabled, bool):
            raise TypeError(f"{owner}: ipc_enabled must be a bool, got {type(self.ipc_enabled).__name__}")
        _check_size(owner, "max_size", self.max_size)
        if self.numa_id is not None:
            _check_size(owner, "numa_id", self.numa_id)


@dataclass
class ManagedMemoryResourceOptions:
    """Options for ManagedMemoryResource: ``ManagedMemoryResourceOptions(preferred_location=0)``.

    preferred_location_type None: preferred_location is a device ordinal, -1 for the host, or
    None (the driver decides); "device": a device ordinal; "host": preferred_location is None.
    "host_numa": preferred_location is a host NUMA node (None: the device's nearest). The
    resource's managed pool is placed there.
    """

    preferred_location: int | None = None
    preferred_location_type: str | None = None

    def __post_init__(self) -> None:
        owner, loc, kind = "ManagedMemoryResourceOptions", self.preferred_location, self.preferred_location_type
        if loc is not None and (isinstance(loc, bool) or not isinstance(loc, int)):
            raise TypeError(f"{owner}: preferred_location must be an int or None, got {type(loc).__name__}")
        if kind is None:
            if loc is not None and loc < -1:
                raise ValueError(f"{owner}: preferred_location must be a device ordinal, -1 (host) or None, got {loc}")
        elif kind == "device":
            if loc is None or loc < 0:
                raise ValueError(f"{owner}: preferred_location must be a device ordinal (>= 0) with "
                                 f"preferred_location_type='device', got {loc}")
        elif kind == "host":
            if loc is not None:
                raise ValueError(f"{owner}: preferred_location must be None with preferred_location_type='host', "
                                 f"got {loc}")
        elif kind == "host_numa":
            if loc is not None and loc < 0:
                raise ValueError(f"{owner}: preferred_location must be a NUMA node ID (>= 0) with "
                                 f"preferred_location_type='host_numa', got {loc}")
        else:
            raise ValueError(f"{owner}: {kind!r} is not a valid ManagedMemoryLocationType. Must be 'device', "
                             "'host' or None (preferred_location_type)")


@dataclass
class VirtualMemoryResourceOptions:
    """Options for VirtualMemoryResource: ``VirtualMemoryResourceOptions(reserve_size=1 << 30, peers=[1])``.

    reserve_size: address space reserved per buffer, the most modify_allocation() can grow it
    to (no memory is committed for it); peers: devices given peer_access to every mapping.
    cuda.core's policy fields: allocation_type ("pinned"), location_type ("device"),
    handle_type ("posix_fd", "fabric" or None: not exportable), granularity ("recommended" or
    "minimum"), gpu_direct_rdma, self_access / peer_access ("rw", "r" or None).
    """

    reserve_size: int = 1 << 32
    peers: list = field(default_factory=list)
    # cuda.core's allocation policy (nanocuda.typing enums or their strings). nanocuda maps
    # pinned device memory only; handle_type None makes it not exportable.
    allocation_type: object = "pinned"
    location_type: object = "device"
    handle_type: object = "posix_fd"
    granularity: object = "recommended"
    gpu_direct_rdma: bool = False
    self_access: object = "rw"
    peer_access: object = "rw"

    def __post_init__(self) -> None:
        _check_size("VirtualMemoryResourceOptions", "reserve_size", self.reserve_size)
        if self.reserve_size == 0:
            raise ValueError("VirtualMemoryResourceOptions: reserve_size must be > 0")
        self.peers = [int(p) for p in self.peers]
        from . import typing as t

        for name, enum, nullable in (("allocation_type", t.VirtualMemoryAllocationType, False),
                                     ("location_type", t.VirtualMemoryLocationType, False),
                                     ("handle_type", t.VirtualMemoryHandleType, True),
                                     ("granularity", t.VirtualMemoryGranularityType, False),
                                     ("self_access", t.VirtualMemoryAccessType, True),
                                     ("peer_access", t.VirtualMemoryAccessType, True)):
            value = getattr(self, name)
            if value is None and nullable:
                continue
            try:
                setattr(self, name, enum(value))
            except ValueError:
                raise ValueError(f"VirtualMemoryResourceOptions: {name}={value!r} is not one of "
                                 f"{[m.value for m in enum]}{' or None' if nullable else ''}") from None
        if not isinstance(self.gpu_direct_rdma, bool):
            raise TypeError("VirtualMemoryResourceOptions: gpu_direct_rdma must be a bool, got "
                            f"{type(self.gpu_direct_rdma).__name__}")


def coerce_options(call: str, cls_name: str, options):
    """The options object a resource's constructor uses: a dict becomes ``cls_name(**options)``
    (cuda.core takes dicts), naming the call and any unknown key; other types are refused."""
    cls = globals()[cls_name]
    if options is None or isinstance(options, cls) or type(options).__name__ == cls_name:
        return options
    if isinstance(options, dict):
        known = [f.name for f in fields(cls)]
        for key in options:
            if not isinstance(key, str) or key not in known:
                raise TypeError(f"{call}: unknown option {key!r} for {cls_name} (known: {', '.join(known)})")
        return cls(**options)
    raise TypeError(f"{call}: options must be a nanocuda.{cls_name}, a dict of its fields or None, "
                    f"got {type(options).__name__}")
