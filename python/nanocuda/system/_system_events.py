"""System-wide NVML events in cuda.core's shape: register_events, RegisteredSystemEvents, SystemEvents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from .. import _nanocuda
from .typing import SystemEventType

if TYPE_CHECKING:
    from ._device import Device

__all__ = ["RegisteredSystemEvents", "SystemEvent", "SystemEvents", "register_events"]

# nvmlSystemEventType* bits.
_BITS = {SystemEventType.UNBIND: 0x1, SystemEventType.BIND: 0x2}


def _pci_bus_id(gpu_id: int) -> str:
    # NVML packs the PCI address as domain (bits 16..31), bus (8..15), device (0..7).
    return f"{(gpu_id >> 16) & 0xFFFF:08X}:{(gpu_id >> 8) & 0xFF:02X}:{gpu_id & 0xFF:02X}.0"


class SystemEvent:
    """One system event: its event_type, the gpu_id (PCI id, packed) and that device."""

    def __init__(self, event_type: SystemEventType, gpu_id: int) -> None:
        self._event_type = event_type
        self._gpu_id = gpu_id

    @property
    def event_type(self) -> SystemEventType:
        """The SystemEventType that happened."""
        return self._event_type

    @property
    def gpu_id(self) -> int:
        """The GPU's id in NVML's packed PCI format."""
        return self._gpu_id

    @property
    def device(self) -> Device:
        """The nanocuda.system.Device the event is about (looked up by its PCI bus id)."""
        from ._device import Device

        return Device(pci_bus_id=_pci_bus_id(self._gpu_id))

    def __repr__(self) -> str:
        return f"SystemEvent(event_type={self._event_type.value!r}, gpu_id={self._gpu_id:#x})"


class SystemEvents:
    """The events one RegisteredSystemEvents.wait() returned (a sequence of SystemEvent)."""

    def __init__(self, events: list[SystemEvent]) -> None:
        self._events = list(events)

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, idx: int) -> SystemEvent:
        """The SystemEvent at `idx`."""
        return self._events[idx]

    def __iter__(self):
        return iter(self._events)


class RegisteredSystemEvents:
    """System event types being recorded since register_events(); wait() for them."""

    def __init__(self, events: Union[SystemEventType, str, list[Union[SystemEventType, str]]]) -> None:
        call = "nanocuda.system.register_events"
        if isinstance(events, (str, SystemEventType)):
            events = [events]
        if not isinstance(events, (list, tuple)):
            raise TypeError(f"{call}: events must be a SystemEventType, a str or a list of them, "
                            f"got {type(events).__name__}")
        bits = 0
        for e in events:
            bits |= _BITS[SystemEventType._coerce(e, call)]
        self._set = _nanocuda._internal.NvmlSystemEventSet(bits)

    def wait(self, timeout_ms: int = 0, buffer_size: int = 1) -> SystemEvents:
        """Up to buffer_size events, waiting at most timeout_ms (0: no limit) for the first;
        nanocuda.system.TimeoutError when none came."""
        for name, value in (("timeout_ms", timeout_ms), ("buffer_size", buffer_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise TypeError(f"RegisteredSystemEvents.wait: {name} must be a non-negative int, got {value!r}")
        kinds = {bit: kind for kind, bit in _BITS.items()}
        raw = self._set.wait(timeout_ms, buffer_size)
        return SystemEvents([SystemEvent(kinds.get(t, SystemEventType.UNBIND), g) for t, g in raw])


def register_events(events: Union[SystemEventType, str, list[Union[SystemEventType, str]]]) -> RegisteredSystemEvents:
    """Start recording system events (GPU driver bind/unbind; Linux, r575+ drivers) and return
    the RegisteredSystemEvents to wait() on; NotSupportedError when none can be registered."""
    return RegisteredSystemEvents(events)
