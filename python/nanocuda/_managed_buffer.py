"""ManagedBuffer (a Buffer of managed memory with advice, prefetch and discard) and the batched
utils.prefetch_batch / discard_batch / discard_prefetch_batch, as cuda.core names them."""

from __future__ import annotations

from collections.abc import Iterable, MutableSet
from typing import Optional, Union

from ._host import Host
from ._nanocuda import Buffer, Device, _internal

__all__ = ["ManagedBuffer", "discard_batch", "discard_prefetch_batch", "prefetch_batch"]

Location = Union[Device, Host]


def _location(call: str, value: object, *, allow_none: bool = False) -> Optional[tuple]:
    # (kind, id) for the C++ side; cuda.core takes a Device or a Host, not an int.
    if value is None:
        if allow_none:
            return None
        raise ValueError(f"{call}: location is required (a Device or a Host)")
    if isinstance(value, Device):
        return ("device", value.device_id)
    if isinstance(value, Host):
        if value.is_numa_current:
            return ("host_numa_current", 0)
        return ("host", 0) if value.numa_id is None else ("host_numa", value.numa_id)
    raise TypeError(f"{call}: location must be a Device, Host, or None; got {type(value).__name__}")


def _from_pair(pair: Optional[tuple]) -> Optional[Location]:
    if pair is None:
        return None
    kind, ident = pair
    if kind == "device":
        return Device(ident)
    if kind == "host_numa":
        return Host(numa_id=ident)
    return Host.numa_current() if kind == "host_numa_current" else Host()


def _buffers(call: str, buffers: object) -> list:
    if isinstance(buffers, Buffer) or not isinstance(buffers, Iterable):
        raise TypeError(f"{call}: buffers must be a sequence of Buffers, got {type(buffers).__name__}")
    out = list(buffers)
    if not out:  # the driver's batch calls take at least one range
        raise ValueError(f"{call}: buffers is empty; pass at least one Buffer")
    return out


def _locations(call: str, locations: object, count: int) -> list:
    if isinstance(locations, (Device, Host)) or locations is None:
        return [_location(call, locations)]
    if isinstance(locations, str) or not isinstance(locations, Iterable):
        raise TypeError(f"{call}: locations must be a Device, a Host or a sequence of them, "
                        f"got {type(locations).__name__}")
    pairs = [_location(call, loc) for loc in locations]
    if len(pairs) != count:
        raise ValueError(f"{call}: {len(pairs)} locations for {count} buffers; the length must match")
    return pairs


def prefetch_batch(stream, buffers, locations) -> None:
    """Migrate managed Buffers to `locations` (one Device/Host for all, or one each) in the
    order of `stream` (cuMemPrefetchBatchAsync)."""
    call = "prefetch_batch"
    bufs = _buffers(call, buffers)
    _internal.managed_prefetch_batch(stream, bufs, _locations(call, locations, len(bufs)), call)


def discard_batch(stream, buffers) -> None:
    """Mark managed Buffers' contents as no longer needed, in the order of `stream`
    (cuMemDiscardBatchAsync, CUDA 13)."""
    _internal.managed_discard_batch(stream, _buffers("discard_batch", buffers), "discard_batch")


def discard_prefetch_batch(stream, buffers, locations) -> None:
    """Discard managed Buffers' contents and prefetch them to `locations`, in the order of
    `stream` (cuMemDiscardAndPrefetchBatchAsync, CUDA 13)."""
    call = "discard_prefetch_batch"
    bufs = _buffers(call, buffers)
    _internal.managed_discard_prefetch_batch(stream, bufs, _locations(call, locations, len(bufs)), call)


class _AccessedBy(MutableSet):
    """The live set of locations a ManagedBuffer is advised as accessed by (cuMemAdvise)."""

    def __init__(self, buf: "ManagedBuffer") -> None:
        self._buf = buf

    @classmethod
    def _from_iterable(cls, it):
        return set(it)

    def _current(self) -> list:
        return [_from_pair(p) for p in _internal.managed_range_attribute(self._buf, "accessed_by",
                                                                         "ManagedBuffer.accessed_by")]

    def __contains__(self, location: object) -> bool:
        return location in self._current()

    def __iter__(self):
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())

    def add(self, location: Location) -> None:
        """Advise that `location` (a Device or Host()) accesses the buffer."""
        pair = _location("ManagedBuffer.accessed_by.add", location)
        _internal.managed_advise(self._buf, "set_accessed_by", pair, "ManagedBuffer.accessed_by.add")

    def discard(self, location: Location) -> None:
        """Withdraw the advice for `location`."""
        pair = _location("ManagedBuffer.accessed_by.discard", location)
        if pair[0] in ("device", "host"):
            _internal.managed_advise(self._buf, "unset_accessed_by", pair, "ManagedBuffer.accessed_by.discard")

    def __repr__(self) -> str:
        return f"{{{', '.join(repr(x) for x in self._current())}}}"


class ManagedBuffer(Buffer):
    """A Buffer of managed (unified) memory, with cuMemAdvise as properties (read_mostly,
    preferred_location, accessed_by) and prefetch / discard / discard_prefetch.
    ManagedMemoryResource.allocate returns one; ManagedBuffer.from_handle wraps other
    managed memory (checked when an operation runs)."""

    @classmethod
    def from_handle(cls, ptr, size, mr=None, owner=None, *, stream=None) -> "ManagedBuffer":
        """A ManagedBuffer over managed memory at `ptr` (see Buffer.from_handle)."""
        return _internal.buffer_as(cls, Buffer.from_handle(ptr, size, mr=mr, owner=owner, stream=stream))

    @property
    def read_mostly(self) -> bool:
        """cuMemAdvise SET_READ_MOSTLY is in force."""
        return _internal.managed_range_attribute(self, "read_mostly", "ManagedBuffer.read_mostly")

    @read_mostly.setter
    def read_mostly(self, value: bool) -> None:
        advice = "set_read_mostly" if value else "unset_read_mostly"
        _internal.managed_advise(self, advice, None, "ManagedBuffer.read_mostly")

    @property
    def preferred_location(self) -> Optional[Location]:
        """Where pages prefer to live: a Device, a Host, or None."""
        pair = _internal.managed_range_attribute(self, "preferred_location", "ManagedBuffer.preferred_location")
        return _from_pair(pair)

    @preferred_location.setter
    def preferred_location(self, value: Optional[Location]) -> None:
        call = "ManagedBuffer.preferred_location"
        pair = _location(call, value, allow_none=True)
        if pair is None:
            _internal.managed_advise(self, "unset_preferred_location", ("host", 0), call)
        else:
            _internal.managed_advise(self, "set_preferred_location", pair, call)

    @property
    def accessed_by(self) -> _AccessedBy:
        """The locations advised as accessing the buffer: a live set (add / discard)."""
        return _AccessedBy(self)

    @accessed_by.setter
    def accessed_by(self, locations: Iterable[Location]) -> None:
        call = "ManagedBuffer.accessed_by"
        if not hasattr(locations, "__iter__"):
            raise TypeError(f"{call}: expected an iterable of locations (Devices or Host()), got {type(locations).__name__}")
        wanted = []
        for loc in locations:  # every entry checked before anything changes
            pair = _location(call, loc)
            if pair[0] not in ("device", "host"):
                raise ValueError(f"{call}: advise SET_ACCESSED_BY does not support location_type='{pair[0]}' "
                                 "(a Device or Host() only)")
            wanted.append(pair)
        for old in _internal.managed_range_attribute(self, "accessed_by", call):
            if tuple(old) not in wanted:
                _internal.managed_advise(self, "unset_accessed_by", old, call)
        for pair in wanted:
            _internal.managed_advise(self, "set_accessed_by", pair, call)

    def prefetch(self, location: Location, *, stream) -> None:
        """Migrate the pages to `location` (a Device or Host) in the order of `stream`."""
        _internal.managed_prefetch_batch(stream, [self], [_location("ManagedBuffer.prefetch", location)],
                                         "ManagedBuffer.prefetch")

    def discard(self, *, stream) -> None:
        """Mark the contents as no longer needed, in the order of `stream` (CUDA 13)."""
        _internal.managed_discard_batch(stream, [self], "ManagedBuffer.discard")

    def discard_prefetch(self, location: Location, *, stream) -> None:
        """Discard the contents and prefetch the pages to `location`, in the order of `stream`."""
        _internal.managed_discard_prefetch_batch(stream, [self], [_location("ManagedBuffer.discard_prefetch", location)],
                                                 "ManagedBuffer.discard_prefetch")


# ManagedMemoryResource.allocate (a raw C++ fast path) returns this class (cuda.core).
_internal.set_managed_buffer_type(ManagedBuffer)
