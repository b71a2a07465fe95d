"""The enumerations nanocuda.system takes and returns, in cuda.core.system.typing's names."""

from __future__ import annotations

from enum import Enum, IntEnum

__all__ = ["AddressingMode", "AffinityScope", "ClocksEventReasons", "DeviceArch", "EventType",
           "FieldId", "GpuTopologyLevel", "InforomObject", "SystemEventType"]


class _StrEnum(str, Enum):
    """A string enum whose members compare equal to their value ("node" == AffinityScope.NODE)."""

    def __str__(self) -> str:
        return self.value

    @classmethod
    def _coerce(cls, value: object, call: str):
        """`value` as a member: a member, its value or its name (any case); else ValueError."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            for m in cls:
                if value.lower() in (m.value.lower(), m.name.lower()):
                    return m
            raise ValueError(f"{call}: {value!r} is not a valid {cls.__name__}. "
                             f"Must be one of {[m.value for m in cls]}")
        raise TypeError(f"{call}: expected a {cls.__name__} or str, got {type(value).__name__}")


class AddressingMode(_StrEnum):
    """How system-allocated memory is addressable from the device."""

    HMM = "hmm"
    ATS = "ats"


class AffinityScope(_StrEnum):
    """The scope of a CPU or memory affinity query."""

    NODE = "node"
    SOCKET = "socket"


class ClocksEventReasons(_StrEnum):
    """Why the clocks are what they are (NVML's clocks event reasons)."""

    NONE = "none"
    GPU_IDLE = "gpu_idle"
    APPLICATIONS_CLOCKS_SETTING = "applications_clocks_setting"
    SW_POWER_CAP = "sw_power_cap"
    HW_SLOWDOWN = "hw_slowdown"
    SYNC_BOOST = "sync_boost"
    SW_THERMAL_SLOWDOWN = "sw_thermal_slowdown"
    HW_THERMAL_SLOWDOWN = "hw_thermal_slowdown"
    HW_POWER_BRAKE_SLOWDOWN = "hw_power_brake_slowdown"
    DISPLAY_CLOCK_SETTING = "display_clock_setting"


class EventType(_StrEnum):
    """Device event types that Device.register_events waits on."""

    NONE = "none"
    SINGLE_BIT_ECC_ERROR = "single_bit_ecc_error"
    DOUBLE_BIT_ECC_ERROR = "double_bit_ecc_error"
    PSTATE = "pstate"
    XID_CRITICAL_ERROR = "xid_critical_error"
    CLOCK = "clock"
    POWER_SOURCE_CHANGE = "power_source_change"
    MIG_CONFIG_CHANGE = "mig_config_change"
    SINGLE_BIT_ECC_ERROR_STORM = "single_bit_ecc_error_storm"
    DRAM_RETIREMENT_EVENT = "dram_retirement_event"
    DRAM_RETIREMENT_FAILURE = "dram_retirement_failure"
    NON_FATAL_POISON_ERROR = "non_fatal_poison_error"
    FATAL_POISON_ERROR = "fatal_poison_error"
    GPU_UNAVAILABLE_ERROR = "gpu_unavailable_error"
    GPU_RECOVERY_ACTION = "gpu_recovery_action"


class GpuTopologyLevel(_StrEnum):
    """How far apart two GPUs sit in the system's topology."""

    INTERNAL = "internal"
    SINGLE = "single"
    MULTIPLE = "multiple"
    HOSTBRIDGE = "hostbridge"
    NODE = "node"
    SYSTEM = "system"


class InforomObject(_StrEnum):
    """The objects an InfoROM holds."""

    OEM = "oem"
    ECC = "ecc"
    POWER = "power"
    DEN = "den"


class DeviceArch(IntEnum):
    """A device's architecture, ordered oldest first (NVML's values)."""

    KEPLER = 2
    MAXWELL = 3
    PASCAL = 4
    VOLTA = 5
    TURING = 6
    AMPERE = 7
    ADA = 8
    HOPPER = 9
    BLACKWELL = 10
    UNKNOWN = 0xFFFFFFFF


class FieldId(IntEnum):
    """NVML field ids for Device.get_field_values (a few common ones; any int id works too)."""

    DEV_ECC_CURRENT = 1
    DEV_MEMORY_TEMP = 82
    DEV_TOTAL_ENERGY_CONSUMPTION = 83
    DEV_NVLINK_LINK_COUNT = 91
    DEV_PCIE_REPLAY_COUNTER = 94
    DEV_POWER_INSTANT = 186
    DEV_PCIE_COUNT_TX_BYTES = 197
    DEV_PCIE_COUNT_RX_BYTES = 198


# NVML's numbers for the string enums (nvml.h's constants), used by nanocuda.system._device.
_CLOCK_REASON_BITS = {ClocksEventReasons.GPU_IDLE: 0x1, ClocksEventReasons.APPLICATIONS_CLOCKS_SETTING: 0x2,
                      ClocksEventReasons.SW_POWER_CAP: 0x4, ClocksEventReasons.HW_SLOWDOWN: 0x8,
                      ClocksEventReasons.SYNC_BOOST: 0x10, ClocksEventReasons.SW_THERMAL_SLOWDOWN: 0x20,
                      ClocksEventReasons.HW_THERMAL_SLOWDOWN: 0x40,
                      ClocksEventReasons.HW_POWER_BRAKE_SLOWDOWN: 0x80,
                      ClocksEventReasons.DISPLAY_CLOCK_SETTING: 0x100}
_EVENT_BITS = {e: (0 if e is EventType.NONE else bit) for e, bit in zip(
    EventType, [0, 0x1, 0x2, 0x4, 0x8, 0x10, 0x80, 0x100, 0x200, 0x400, 0x800, 0x1000, 0x2000, 0x4000, 0x8000])}
_TOPOLOGY_LEVELS = {level: 10 * i for i, level in enumerate(GpuTopologyLevel)}
_AFFINITY_SCOPES = {AffinityScope.NODE: 0, AffinityScope.SOCKET: 1}


class SystemEventType(_StrEnum):
    """System-wide NVML event types (nanocuda.system.register_events)."""

    UNBIND = "unbind"
    BIND = "bind"
