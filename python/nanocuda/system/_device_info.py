"""What nanocuda.system.Device's queries return: read-only records of NVML's answers."""

from __future__ import annotations

from .exceptions import _from_code

_NOT_MIG = 0xFFFFFFFF  # NVML's gpu/compute instance id outside MIG


class _Record:
    """Read-only fields from one NVML query."""

    _fields: tuple[str, ...] = ()

    def __init__(self, *values: object) -> None:
        for name, value in zip(self._fields, values):
            object.__setattr__(self, "_" + name, value)

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({inner})"


def _field(name: str, doc: str) -> property:
    return property(lambda self: getattr(self, "_" + name), doc=doc)


class MemoryInfo(_Record):
    """Device memory in bytes: free + used + reserved == total."""

    _fields = ("free", "total", "used", "reserved")
    free = _field("free", "Unallocated device memory, in bytes.")
    total = _field("total", "Total device memory, in bytes.")
    used = _field("used", "Allocated device memory, in bytes.")
    reserved = _field("reserved", "Device memory the system reserves, in bytes.")


class BAR1MemoryInfo(_Record):
    """BAR1 (the CPU's window onto device memory) in bytes: free + used == total."""

    _fields = ("free", "total", "used")
    free = _field("free", "Unused BAR1 memory, in bytes.")
    total = _field("total", "Total BAR1 memory, in bytes.")
    used = _field("used", "Used BAR1 memory, in bytes.")


class Utilization(_Record):
    """Percent of the last sample period the GPU, and its memory, were busy."""

    _fields = ("gpu", "memory")
    gpu = _field("gpu", "Percent of time a kernel ran.")
    memory = _field("memory", "Percent of time device memory was read or written.")


class RepairStatus(_Record):
    """Pending repairs (Ampere and newer)."""

    _fields = ("channel_repair_pending", "tpc_repair_pending")
    channel_repair_pending = _field("channel_repair_pending", "A memory channel repair is pending.")
    tpc_repair_pending = _field("tpc_repair_pending", "A TPC repair is pending.")


class GpuDynamicPstatesUtilization(_Record):
    """One utilization domain of the dynamic P-state controller."""

    _fields = ("is_present", "percentage", "inc_threshold", "dec_threshold")
    is_present = _field("is_present", "Whether this domain exists on the device.")
    percentage = _field("percentage", "Its utilization, in percent.")
    inc_threshold = _field("inc_threshold", "Utilization above which the P-state goes up.")
    dec_threshold = _field("dec_threshold", "Utilization below which the P-state goes down.")


class GpuDynamicPstatesInfo:
    """The dynamic P-state controller's utilization domains (NVML's 8)."""

    def __init__(self, domains: list) -> None:
        self._domains = [GpuDynamicPstatesUtilization(*d) for d in domains]

    def __len__(self) -> int:
        return len(self._domains)

    def __getitem__(self, idx: int) -> GpuDynamicPstatesUtilization:
        return self._domains[idx]


class ProcessInfo(_Record):
    """A process running compute work on a device."""

    _fields = ("pid", "used_gpu_memory")
    pid = _field("pid", "The process id.")
    used_gpu_memory = _field("used_gpu_memory", "Device memory it uses, in bytes.")

    def __init__(self, pid: int, used: int, gpu_instance: int, compute_instance: int) -> None:
        super().__init__(pid, used)
        self._gi, self._ci = gpu_instance, compute_instance

    @property
    def gpu_instance_id(self) -> int:
        """Its MIG GPU instance; NotSupportedError on a device without MIG."""
        if self._gi == _NOT_MIG:
            raise _from_code(3, "ProcessInfo.gpu_instance_id: the device is not a MIG device")
        return self._gi

    @property
    def compute_instance_id(self) -> int:
        """Its MIG compute instance; NotSupportedError on a device without MIG."""
        if self._ci == _NOT_MIG:
            raise _from_code(3, "ProcessInfo.compute_instance_id: the device is not a MIG device")
        return self._ci


class PciInfo:
    """A device's PCI identity and PCIe link, as NVML reports them."""

    def __init__(self, info: dict, nvml: object) -> None:
        self._info, self._nvml = info, nvml

    bus_id = property(lambda self: self._info["bus_id"], doc="'0000:01:00.0': domain:bus:device.function.")
    domain = property(lambda self: self._info["domain"], doc="The PCI domain.")
    bus = property(lambda self: self._info["bus"], doc="The PCI bus.")
    device = property(lambda self: self._info["device"], doc="The PCI device number.")
    vendor_id = property(lambda self: self._info["vendor_id"], doc="The PCI vendor id (0x10de).")
    device_id = property(lambda self: self._info["device_id"], doc="The PCI device id.")
    subsystem_id = property(lambda self: self._info["subsystem_id"], doc="The PCI subsystem id.")
    base_class = property(lambda self: self._info["base_class"], doc="The 8-bit PCI base class code.")
    sub_class = property(lambda self: self._info["sub_class"], doc="The 8-bit PCI sub class code.")
    link_generation = property(lambda self: self._nvml.pcie_value(0),
                               doc="The highest PCIe generation this device and system can use.")
    max_link_generation = property(lambda self: self._nvml.pcie_value(1),
                                   doc="The highest PCIe generation the GPU supports.")
    max_link_width = property(lambda self: self._nvml.pcie_value(2),
                              doc="The widest PCIe link this device and system can use.")
    current_link_generation = property(lambda self: self._nvml.pcie_value(3), doc="The current PCIe generation.")
    current_link_width = property(lambda self: self._nvml.pcie_value(4), doc="The current PCIe link width.")
    replay_counter = property(lambda self: self._nvml.pcie_value(5), doc="The PCIe replay counter.")
    tx_throughput = property(lambda self: self._nvml.pcie_throughput(0), doc="PCIe transmit throughput, KB/s.")
    rx_throughput = property(lambda self: self._nvml.pcie_throughput(1), doc="PCIe receive throughput, KB/s.")

    def __repr__(self) -> str:
        return f"PciInfo(bus_id={self.bus_id!r})"


class EventData(_Record):
    """One event NVML reported."""

    _fields = ("device", "event_type", "event_data", "gpu_instance_id", "compute_instance_id")
    device = _field("device", "The Device the event came from.")
    event_type = _field("event_type", "Its EventType.")
    event_data = _field("event_data", "Its data (the XID for XID_CRITICAL_ERROR).")
    gpu_instance_id = _field("gpu_instance_id", "The MIG GPU instance, where there is one.")
    compute_instance_id = _field("compute_instance_id", "The MIG compute instance, where there is one.")


_INFOROM_OBJECTS = {"oem": 0, "ecc": 1, "power": 2, "den": 3}


class InforomInfo:
    """A device's InfoROM (the board's configuration store): versions, checksum, part number."""

    def __init__(self, device: object) -> None:
        self._nvml = device._nvml  # type: ignore[attr-defined]

    @property
    def image_version(self) -> str:
        """The InfoROM image version."""
        return self._nvml.inforom_image_version()

    def get_version(self, inforom: object) -> str:
        """The version of one InfoROM object (InforomObject.OEM, ECC, POWER or DEN)."""
        from .typing import InforomObject

        obj = InforomObject._coerce(inforom, "InforomInfo.get_version")
        return self._nvml.inforom_version(_INFOROM_OBJECTS[obj.value])

    @property
    def configuration_checksum(self) -> int:
        """The checksum of the InfoROM's configuration."""
        return self._nvml.inforom_checksum()

    def validate(self) -> None:
        """Checks the InfoROM's integrity; CorruptedInforomError where it fails."""
        self._nvml.validate_inforom()

    @property
    def bbx_flush_time(self) -> tuple[int, int]:
        """(timestamp, duration in microseconds) of the last black-box recorder flush."""
        return tuple(self._nvml.last_bbx_flush_time())  # type: ignore[return-value]

    @property
    def board_part_number(self) -> str:
        """The board's part number ('' where none is programmed)."""
        return self._nvml.board_part_number().strip()


class FieldValue(_Record):
    """One NVML field value: what was asked (field_id, scope_id) and the answer."""

    _fields = ("field_id", "scope_id", "timestamp", "latency_usec", "value")
    field_id = _field("field_id", "The field (a FieldId member where nanocuda names it, else the int).")
    scope_id = _field("scope_id", "The scope (e.g. the NVLink) the value is for.")
    timestamp = _field("timestamp", "When it was read, in microseconds since 1970.")
    latency_usec = _field("latency_usec", "How long reading it took, in microseconds.")
    value = _field("value", "The value: an int, or a float for floating-point fields.")


class FieldValues:
    """The answers of one Device.get_field_values call, in the order asked."""

    def __init__(self, rows: list) -> None:
        from .typing import FieldId

        self._values, self._returns = [], []
        for fid, scope, ts, lat, ret, value in rows:
            try:
                fid = FieldId(fid)
            except ValueError:
                pass
            self._values.append(FieldValue(fid, scope, ts, lat, value))
            self._returns.append(ret)

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, idx: int) -> FieldValue:
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise TypeError(f"FieldValues: indices are ints, got {type(idx).__name__}")
        return self._values[idx]

    def __iter__(self):
        return iter(self._values)

    def validate(self) -> None:
        """Raises the NVML error of the first field NVML could not read."""
        for v, ret in zip(self._values, self._returns):
            if ret:
                raise _from_code(ret, f"FieldValues.validate: field {int(v.field_id)} (scope {v.scope_id}) "
                                      f"failed with NVML code {ret}")

    def get_all_values(self) -> list:
        """Every value, in order."""
        return [v.value for v in self._values]

