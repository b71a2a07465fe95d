"""nanocuda.system.Device: one GPU as NVML sees it, with cuda.core.system.Device's names.

Each property is one query of the C++ core's NvmlDevice (src/nvml/); the classes here only
give its results cuda.core's shapes. NVML loads on the first query, never at import.
"""

from __future__ import annotations

import array
import warnings
from collections.abc import Iterable, Sequence

from .. import _nanocuda
from ._device_info import (  # noqa: F401 - cuda.core.system._device names them
    BAR1MemoryInfo, FieldValue, FieldValues, GpuDynamicPstatesInfo, InforomInfo, GpuDynamicPstatesUtilization, MemoryInfo, PciInfo,
    ProcessInfo, RepairStatus, Utilization,
)
from ._device_info import EventData
from .exceptions import NvmlError, _from_code
from .typing import (
    _AFFINITY_SCOPES, _CLOCK_REASON_BITS, _EVENT_BITS, _TOPOLOGY_LEVELS, AddressingMode,
    AffinityScope, ClocksEventReasons, DeviceArch, EventType, GpuTopologyLevel,
)

__all__ = ["Device", "NvlinkInfo"]

_BRANDS = ["Unknown", "Quadro", "Tesla", "NVS", "GRID", "GeForce", "Titan", "NVIDIA Virtual Applications",
           "NVIDIA Virtual PC", "NVIDIA Virtual Compute Server", "NVIDIA RTX Virtual Workstation",
           "NVIDIA Cloud Gaming", "Quadro RTX", "NVIDIA RTX", "NVIDIA", "GeForce RTX", "Titan RTX"]
_NVLINK_VERSIONS = {1: (1, 0), 2: (2, 0), 3: (2, 2), 4: (3, 0), 5: (3, 1), 6: (4, 0), 7: (5, 0)}
_NVLINK_MAX_LINKS = 18  # NVML_NVLINK_MAX_LINKS
_UINT_MAX = 2**32 - 1  # NVML's indices and field ids are C unsigned ints


def _unpack_bitmask(words: Sequence[int]) -> list[int]:
    """The indices of the set bits of a bitmask held in 64-bit words, lowest word first."""
    if isinstance(words, (int, str, bytes)) or not isinstance(words, (array.array, Sequence)):
        raise TypeError(f"nanocuda.system._unpack_bitmask: expected a sequence of 64-bit words, "
                        f"got {type(words).__name__}")
    return [64 * i + bit for i, w in enumerate(words) for bit in range(64) if (int(w) >> bit) & 1]


class _NvlinkInfoMeta(type):
    @property
    def max_links(cls) -> int:
        warnings.warn("NvlinkInfo.max_links is deprecated: iterate Device.get_nvlinks() instead",
                      DeprecationWarning, stacklevel=2)
        return _NVLINK_MAX_LINKS


class NvlinkInfo(metaclass=_NvlinkInfoMeta):
    """One NVLink of a device."""

    def __init__(self, device: Device, link: int) -> None:
        self._device, self._link = device, link

    @property
    def state(self) -> bool:
        """Whether the link is active."""
        return self._device._nvml.nvlink_state(self._link)

    @property
    def version(self) -> tuple[int, int]:
        """The NVLink version, (major, minor)."""
        v = self._device._nvml.nvlink_version(self._link)
        return _NVLINK_VERSIONS.get(v, (v, 0))


class MigInfo:
    """A device's MIG (Multi-Instance GPU) state."""

    def __init__(self, device: Device) -> None:
        self._device = device

    @property
    def is_mig_device(self) -> bool:
        """Whether this handle is a MIG device (a slice of a GPU)."""
        return self._device._nvml.is_mig_device()

    @property
    def mode(self) -> bool:
        """Whether MIG mode is on."""
        return self._device._nvml.mig_mode()[0]

    @property
    def pending_mode(self) -> bool:
        """The MIG mode after the next GPU reset."""
        return self._device._nvml.mig_mode()[1]

    @property
    def device_count(self) -> int:
        """How many MIG devices this GPU can hold."""
        return self._device._nvml.max_mig_device_count()

    @property
    def parent(self) -> Device:
        """The physical GPU of a MIG device."""
        return Device._wrap(self._device._nvml.mig_parent())

    def get_device_by_index(self, index: int) -> Device:
        """The MIG device in slot `index`; NotFoundError where the slot is empty."""
        index = _index_arg("MigInfo.get_device_by_index", index)
        if index >= self.device_count:
            raise _from_code(2, f"MigInfo.get_device_by_index: slot {index} is out of range; this GPU holds at "
                             f"most {self.device_count} MIG devices", "NVML_ERROR_INVALID_ARGUMENT")
        nvml = self._device._nvml.mig_device(index)
        if nvml is None:
            raise _from_code(6, f"MigInfo.get_device_by_index: no MIG device in slot {index}")
        return Device._wrap(nvml)

    def get_all_devices(self) -> Iterable[Device]:
        """The MIG devices that exist (none while MIG mode is off; empty slots skipped)."""
        if not self.is_mig_device and not self.mode:
            return
        for i in range(self.device_count):
            nvml = self._device._nvml.mig_device(i)
            if nvml is not None:
                yield Device._wrap(nvml)


class DeviceEvents:
    """Events registered on one device (Device.register_events); wait() for the next."""

    def __init__(self, device: Device, events: object) -> None:
        self._device = device
        bits = 0
        for e in _event_list("Device.register_events", events):
            bits |= _EVENT_BITS[e]
        self._set = _nanocuda._internal.NvmlEventSet(device._nvml, bits)

    def wait(self, timeout_ms: int = 0) -> EventData:
        """The next event; nanocuda.system.TimeoutError when none comes within timeout_ms."""
        handle, etype, data, gi, ci = self._set.wait(_index_arg("DeviceEvents.wait", timeout_ms))
        kind = next((e for e, b in _EVENT_BITS.items() if b == etype), EventType.NONE)
        return EventData(self._device, kind, data, gi, ci)

    def __reduce__(self) -> object:
        raise TypeError("cannot pickle a nanocuda.system.DeviceEvents: its NVML event set belongs to this "
                        "process; call register_events in the other process")


def _index_arg(call: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{call}: expected a non-negative int, got {value!r}")
    if value > _UINT_MAX:
        raise ValueError(f"{call}: {value} is out of range (NVML takes an unsigned int, at most {_UINT_MAX})")
    return value


def _field_ids(call: str, field_ids: object) -> list[tuple[int, int]]:
    if not isinstance(field_ids, (list, tuple)):
        raise TypeError(f"{call}: field_ids must be a list of ints or (id, scope) pairs, got {type(field_ids).__name__}")
    out = []
    for f in field_ids:
        pair = tuple(f) if isinstance(f, (tuple, list)) else (f, 0)
        if len(pair) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in pair):
            raise TypeError(f"{call}: each field id must be a non-negative int or an (id, scope) pair, got {f!r}")
        if max(pair) > _UINT_MAX:
            raise ValueError(f"{call}: field id {f!r} is out of range (NVML takes unsigned ints, at most {_UINT_MAX})")
        out.append((int(pair[0]), int(pair[1])))
    return out


def _event_list(call: str, events: object) -> list[EventType]:
    if isinstance(events, (str, EventType)):
        events = [events]
    if not isinstance(events, (list, tuple)):
        raise TypeError(f"{call}: events must be an EventType, a str or a list of them, "
                        f"got {type(events).__name__}")
    return [EventType._coerce(e, call) for e in events]


def _reasons(bits: int) -> list[ClocksEventReasons]:
    found = [r for r, b in _CLOCK_REASON_BITS.items() if bits & b]
    return found or [ClocksEventReasons.NONE]


class Device:
    """A GPU as NVML sees it: pass exactly one of index (NVML's), uuid or pci_bus_id.

    NVML's index order need not match CUDA's; to_cuda_device() maps by UUID.
    """

    def __init__(self, *, index: int | None = None, uuid: bytes | str | None = None,
                 pci_bus_id: bytes | str | None = None) -> None:
        given = [(k, v) for k, v in (("index", index), ("uuid", uuid), ("pci_bus_id", pci_bus_id))
                 if v is not None]
        if len(given) != 1:
            raise ValueError("nanocuda.system.Device: pass exactly one of index=, uuid= or pci_bus_id=, "
                             f"got {[k for k, _ in given] or 'none'}")
        key, value = given[0]
        N = _nanocuda._internal.NvmlDevice
        if key == "index":
            lookup = N.by_index
            value = _index_arg("nanocuda.system.Device", value)
        else:
            lookup = N.by_uuid if key == "uuid" else N.by_pci_bus_id
            if isinstance(value, bytes):
                value = value.decode()
            if not isinstance(value, str):
                raise TypeError(f"nanocuda.system.Device: {key} must be a str, got {type(value).__name__}")
        try:
            self._nvml = lookup(value)
        except NvmlError as e:
            if e.code not in (2, 6):  # NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_NOT_FOUND: no such device
                raise
            raise _from_code(e.code, f"nanocuda.system.Device({key}={value!r}): NVML has no such device "
                             f"(it sees {Device.get_device_count()}): {e}", e.name, e.call, e.object) from None

    @classmethod
    def _wrap(cls, nvml: object) -> Device:
        self = cls.__new__(cls)
        self._nvml = nvml
        return self

    @property
    def _handle(self) -> int:
        return self._nvml.handle

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other._handle == self._handle

    def __hash__(self) -> int:
        return hash(("nanocuda.system.Device", self._handle))

    def __repr__(self) -> str:
        return f"<nanocuda.system.Device {self._nvml.describe()}>"

    def __reduce__(self) -> object:
        raise TypeError("cannot pickle a nanocuda.system.Device: its NVML handle belongs to this process; "
                        "send its uuid and make nanocuda.system.Device(uuid=...) there")

    @classmethod
    def get_device_count(cls) -> int:
        """The number of devices NVML sees."""
        return _nanocuda._internal.nvml_device_count()

    @classmethod
    def get_all_devices(cls) -> Iterable[Device]:
        """Every device NVML sees, in NVML's index order."""
        for i in range(cls.get_device_count()):
            yield cls(index=i)

    @classmethod
    def get_all_devices_with_cpu_affinity(cls, cpu_index: int) -> Iterable[Device]:
        """The devices whose CPU affinity includes CPU `cpu_index` (Linux)."""
        cpu = _index_arg("Device.get_all_devices_with_cpu_affinity", cpu_index)  # checked now, not on iteration
        return (cls._wrap(nvml) for nvml in _nanocuda._internal.NvmlDevice.with_cpu_affinity(cpu))

    index = property(lambda self: self._nvml.index(), doc="NVML's index of this device.")
    name = property(lambda self: self._nvml.name(), doc="The device's name, e.g. 'NVIDIA H100 80GB HBM3'.")
    uuid = property(lambda self: self._nvml.uuid(), doc="'GPU-...' (or 'MIG-...'), as NVML reports it.")
    serial = property(lambda self: self._nvml.serial(), doc="The board serial number (boards with an InfoROM).")
    minor_number = property(lambda self: self._nvml.minor_number(), doc="N of /dev/nvidiaN (Linux).")
    module_id = property(lambda self: self._nvml.module_id(), doc="The GPU module's id on its baseboard (else 0).")
    numa_node_id = property(lambda self: self._nvml.numa_node_id(), doc="The device's NUMA node, where it is one.")
    is_c2c_enabled = property(lambda self: self._nvml.c2c_enabled(), doc="Whether chip-to-chip mode is on.")
    is_display_connected = property(lambda self: self._nvml.display_connected(),
                                    doc="Whether a display is connected.")
    is_display_active = property(lambda self: self._nvml.display_active(), doc="Whether a display is active.")
    performance_state = property(lambda self: self._nvml.performance_state(), doc="The current P-state (0 = fastest).")
    supported_pstates = property(lambda self: self._nvml.supported_pstates(), doc="The P-states the device has.")
    mig = property(lambda self: MigInfo(self), doc="The device's MIG state.")
    inforom = property(lambda self: InforomInfo(self), doc="The device's InfoROM.")

    @property
    def uuid_without_prefix(self) -> str:
        """The UUID without 'GPU-'/'MIG-', as CUDA spells it."""
        return self.uuid.split("-", 1)[1]

    @property
    def pci_bus_id(self) -> str:
        """'0000:01:00.0', NVML's PCI bus id."""
        return self.pci_info.bus_id

    @property
    def pci_info(self) -> PciInfo:
        """The device's PCI identity and PCIe link."""
        return PciInfo(self._nvml.pci_info(), self._nvml)

    @property
    def arch(self) -> DeviceArch:
        """The device's architecture (DeviceArch.HOPPER for an H100)."""
        try:
            return DeviceArch(self._nvml.arch())
        except ValueError:
            return DeviceArch.UNKNOWN

    @property
    def brand(self) -> str:
        """The product brand, e.g. 'NVIDIA' or 'GeForce'; 'Unknown' where NVML does not know."""
        b = self._nvml.brand()
        return _BRANDS[b] if 0 <= b < len(_BRANDS) else "Unknown"

    @property
    def cuda_compute_capability(self) -> tuple[int, int]:
        """(major, minor), e.g. (9, 0) for an H100."""
        return tuple(self._nvml.cuda_compute_capability())  # type: ignore[return-value]

    @property
    def memory_info(self) -> MemoryInfo:
        """Device memory: free, total, used and reserved bytes."""
        return MemoryInfo(*self._nvml.memory_info())

    @property
    def bar1_memory_info(self) -> BAR1MemoryInfo:
        """BAR1 memory: free, total and used bytes."""
        return BAR1MemoryInfo(*self._nvml.bar1_memory_info())

    @property
    def utilization(self) -> Utilization:
        """GPU and memory utilization over the last sample period."""
        return Utilization(*self._nvml.utilization())

    @property
    def repair_status(self) -> RepairStatus:
        """Pending channel/TPC repairs."""
        return RepairStatus(*self._nvml.repair_status())

    @property
    def dynamic_pstates_info(self) -> GpuDynamicPstatesInfo:
        """The dynamic P-state controller's utilization domains."""
        return GpuDynamicPstatesInfo(self._nvml.dynamic_pstates_info())

    @property
    def addressing_mode(self) -> AddressingMode | None:
        """HMM or ATS where system memory is addressable from the device, else None."""
        return {1: AddressingMode.HMM, 2: AddressingMode.ATS}.get(self._nvml.addressing_mode())

    @property
    def is_persistence_mode_enabled(self) -> bool:
        """Whether persistence mode is on (Linux); setting it needs root."""
        return self._nvml.persistence_mode()

    @is_persistence_mode_enabled.setter
    def is_persistence_mode_enabled(self, enabled: bool) -> None:
        if not isinstance(enabled, bool):
            raise TypeError(f"Device.is_persistence_mode_enabled: expected a bool, got {enabled!r}")
        self._nvml.set_persistence_mode(enabled)

    @property
    def current_clock_event_reasons(self) -> list[ClocksEventReasons]:
        """Why the clocks are where they are now."""
        return _reasons(self._nvml.clock_event_reasons(False))

    @property
    def supported_clock_event_reasons(self) -> list[ClocksEventReasons]:
        """The clock event reasons this device can report."""
        return _reasons(self._nvml.clock_event_reasons(True))

    @property
    def compute_running_processes(self) -> list[ProcessInfo]:
        """The processes with a compute context on this device."""
        return [ProcessInfo(*p) for p in self._nvml.compute_running_processes()]

    def get_cpu_affinity(self, scope: AffinityScope | str = AffinityScope.NODE) -> list[int]:
        """The CPUs near this device, within `scope` (NODE or SOCKET)."""
        s = _AFFINITY_SCOPES[AffinityScope._coerce(scope, "Device.get_cpu_affinity")]
        return _unpack_bitmask(self._nvml.cpu_affinity(s))

    def get_memory_affinity(self, scope: AffinityScope | str = AffinityScope.NODE) -> list[int]:
        """The NUMA nodes near this device, within `scope` (NODE or SOCKET)."""
        s = _AFFINITY_SCOPES[AffinityScope._coerce(scope, "Device.get_memory_affinity")]
        return _unpack_bitmask(self._nvml.memory_affinity(s))

    def get_topology_nearest_gpus(self, level: GpuTopologyLevel | str) -> Iterable[Device]:
        """The devices at topology distance `level` from this one."""
        lvl = _TOPOLOGY_LEVELS[GpuTopologyLevel._coerce(level, "Device.get_topology_nearest_gpus")]
        return (Device._wrap(nvml) for nvml in self._nvml.topology_nearest_gpus(lvl))  # checked now

    def get_nvlink(self, link: int) -> NvlinkInfo:
        """NVLink number `link` of this device."""
        link = _index_arg("Device.get_nvlink", link)
        if link >= _NVLINK_MAX_LINKS:
            raise ValueError(f"Device.get_nvlink: link {link} is out of range; NVML numbers a device's NVLinks "
                             f"0..{_NVLINK_MAX_LINKS - 1}")
        return NvlinkInfo(self, link)

    def get_field_values(self, field_ids: list) -> FieldValues:
        """NVML field values: each id a FieldId/int, or an (id, scope id) pair; check with validate()."""
        return FieldValues(self._nvml.field_values(_field_ids("Device.get_field_values", field_ids)))

    def clear_field_values(self, field_ids: list) -> None:
        """Resets the given fields (accumulating counters) to zero."""
        self._nvml.clear_field_values(_field_ids("Device.clear_field_values", field_ids))

    def get_supported_event_types(self) -> list[EventType]:
        """The event types register_events can wait for on this device."""
        bits = self._nvml.supported_event_types()
        return [e for e, b in _EVENT_BITS.items() if b and bits & b]

    def register_events(self, events: EventType | str | list[EventType | str]) -> DeviceEvents:
        """Registers event types (EventType members or their names); wait() on the result."""
        return DeviceEvents(self, events)

    def to_cuda_device(self):
        """The nanocuda.Device with this device's UUID; RuntimeError where CUDA has none (MIG)."""
        from .. import Device as CudaDevice

        want = self.uuid_without_prefix.lower()
        for i in range(CudaDevice.count()):
            dev = CudaDevice(i)
            if dev.uuid.lower().removeprefix("gpu-") == want:
                return dev
        raise RuntimeError(f"nanocuda.system.Device.to_cuda_device: no CUDA device has UUID {self.uuid}")
