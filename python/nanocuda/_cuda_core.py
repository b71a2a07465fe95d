"""cuda.core's options objects (StreamOptions, EventOptions), as plain dataclasses.

They only carry values: Device.create_stream / create_event / Stream.record read them (or
a dict, or cuda.core's own options objects) in C++, so there is one implementation each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["EventOptions", "StreamOptions"]


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


@dataclass
class EventOptions:
    """Options for Device.create_event / Stream.record: enable_timing (records time, so
    `end - start` gives milliseconds), busy_waited_sync (CU_EVENT_BLOCKING_SYNC, as cuda.core
    maps it) and ipc_enabled (shareable with other processes; no timing)."""

    enable_timing: Optional[bool] = False
    busy_waited_sync: Optional[bool] = False
    ipc_enabled: Optional[bool] = False

    def __post_init__(self) -> None:
        for name in ("enable_timing", "busy_waited_sync", "ipc_enabled"):
            value = getattr(self, name)
            if value is not None:
                _check_bool("EventOptions", name, value)
        if self.ipc_enabled and self.enable_timing:
            raise ValueError("EventOptions: ipc_enabled events cannot have enable_timing=True")
