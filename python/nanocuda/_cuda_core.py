"""cuda.core's plain-Python names: the options objects (StreamOptions, EventOptions,
TensorMapDescriptorOptions) and LegacyPinnedMemoryResource.

The options only carry values: Device.create_stream / create_event / Stream.record and
StridedMemoryView.as_tensor_map read them (or a dict, or cuda.core's own options objects), so
there is one implementation each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ._nanocuda import PinnedMemoryResource, _internal

__all__ = ["EventOptions", "LegacyPinnedMemoryResource", "StreamOptions", "TensorMapDescriptorOptions"]


def _check_bool(call: str, name: str, value: object) -> None:
    if not isinstance(value, (bool, int)) or value is None:
        raise TypeError(f"{call}: {name} must be a bool, got {type(value).__name__}")


@dataclass
class StreamOptions:
    """Options for Device.create_stream: nonblocking (no implicit sync with the legacy
    stream, default True) and priority (lower runs first; None is the lowest)."""

    nonblocking: bool = True
    priority: Optional[int] = None

    def __post_init__(self) -> None:
        _check_bool("StreamOptions", "nonblocking", self.nonblocking)
        if self.priority is not None and (isinstance(self.priority, bool) or not isinstance(self.priority, int)):
            raise TypeError(f"StreamOptions: priority must be an int or None, got {type(self.priority).__name__}")


# {older name: cuda.core 1.2 name}, from the C++ table every options reader uses.
_EVENT_ALIASES: dict[str, str] = dict(_internal.event_option_aliases)


@dataclass(init=False)
class EventOptions:
    """Options for Device.create_event / Stream.record, with cuda.core 1.2's names:
    timing_enabled (records time, so `end - start` gives milliseconds), blocking_sync
    (CU_EVENT_BLOCKING_SYNC: sync() yields the CPU instead of spinning) and ipc_enabled
    (shareable with other processes; no timing). The older names enable_timing and
    busy_waited_sync are accepted as keywords and readable as attributes."""

    timing_enabled: Optional[bool] = False
    blocking_sync: Optional[bool] = False
    ipc_enabled: Optional[bool] = False

    def __init__(self, timing_enabled: Optional[bool] = None, blocking_sync: Optional[bool] = None,
                 ipc_enabled: Optional[bool] = False, **older: Optional[bool]) -> None:
        given = {"timing_enabled": timing_enabled, "blocking_sync": blocking_sync, "ipc_enabled": ipc_enabled}
        for name, value in given.items():
            if value is not None:
                _check_bool("EventOptions", name, value)
        for name, value in older.items():
            new = _EVENT_ALIASES.get(name)
            if new is None:
                known = ", ".join(list(given) + list(_EVENT_ALIASES))
                raise TypeError(f"EventOptions: unknown option '{name}' (known: {known})")
            if value is None:
                continue
            _check_bool("EventOptions", name, value)
            if given[new] is not None and bool(given[new]) != bool(value):
                raise ValueError(f"EventOptions: {new}={given[new]!r} and its older name {name}={value!r} disagree")
            given[new] = value
        # ipc_enabled with timing_enabled is refused where the event is made (Stream.record), as
        # cuda.core does: the options object itself is only data.
        for name, value in given.items():
            setattr(self, name, False if value is None else value)


def _alias(new: str) -> property:
    def get(self: EventOptions) -> Optional[bool]:
        return getattr(self, new)

    def set(self: EventOptions, value: Optional[bool]) -> None:
        setattr(self, new, value)

    return property(get, set, doc=f"The older name of {new}.")


for _old, _new in _EVENT_ALIASES.items():
    setattr(EventOptions, _old, _alias(_new))


@dataclass
class TensorMapDescriptorOptions:
    """The options of StridedMemoryView.as_tensor_map(options=...), as in cuda.core: box_dim
    (elements per dimension, outermost first), element_strides, data_type (a numpy dtype or
    its name; default the view's), and interleave, swizzle, l2_promotion, oob_fill (None for
    cuda.core's defaults; a name such as "128B", cuda.core's or the driver's enum value).
    TensorMap.tiled takes the same options as keywords."""

    box_dim: tuple
    element_strides: Optional[tuple] = None
    data_type: Any = None
    interleave: Any = None
    swizzle: Any = None
    l2_promotion: Any = None
    oob_fill: Any = None


class LegacyPinnedMemoryResource(PinnedMemoryResource):
    """Page-locked host memory that every device can read (cuda.core's
    LegacyPinnedMemoryResource): allocate(size, stream=None) returns a Buffer the CPU and
    kernels can both use. Like cuda.core's, it is not bound to a device: device_id raises
    RuntimeError. Its Buffers are PinnedMemoryResource's (freeing waits for the buffer's
    stream)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def device_id(self) -> int:
        """Not bound to a device: raises RuntimeError (cuda.core's behaviour)."""
        raise RuntimeError("LegacyPinnedMemoryResource.device_id: a pinned memory resource is not "
                           "bound to any GPU (its memory is host memory every device can read)")

    def __repr__(self) -> str:
        return "<nanocuda.LegacyPinnedMemoryResource>"
