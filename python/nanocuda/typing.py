"""Public type aliases, protocols and string enums of nanocuda's signatures, under cuda.core.typing's names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol, SupportsInt, Union, runtime_checkable

if TYPE_CHECKING:
    from nanocuda import SMResource, WorkqueueResource

__all__ = [
    "AddressModeType",
    "ArrayFormatType",
    "CompilerBackendType",
    "DevicePointerType",
    "DeviceResourcesType",
    "FilterModeType",
    "GraphConditionalType",
    "GraphMemoryType",
    "IsStreamType",
    "ManagedMemoryLocationType",
    "ObjectCodeFormatType",
    "PCHStatusType",
    "ProcessStateType",
    "ReadModeType",
    "SourceCodeType",
    "VirtualMemoryAccessType",
    "VirtualMemoryAllocationType",
    "VirtualMemoryGranularityType",
    "VirtualMemoryHandleType",
    "VirtualMemoryLocationType",
    "WorkqueueSharingScopeType",
]

# Spelled with SupportsInt so that this module never imports cuda.bindings.
#: A device pointer as nanocuda's calls take it (Buffer.from_handle, ...): an int, anything that
#: int() converts (cuda.bindings' CUdeviceptr), or None.
DevicePointerType = Union[int, SupportsInt, None]

#: The resources a green context is made from (ContextOptions.resources): SMResource groups.
DeviceResourcesType = Sequence["Union[SMResource, WorkqueueResource]"]

#: What a checkpointed process reports (cuda.core's checkpoint states).
ProcessStateType = Literal["running", "locked", "checkpointed", "failed"]


@runtime_checkable
class IsStreamType(Protocol):
    """An object that names a CUDA stream: ``__cuda_stream__()`` returns ``(version, handle)``."""

    def __cuda_stream__(self) -> tuple[int, int]: ...


from ._str_enum import _StrEnum  # also used by modules `import nanocuda` loads (this one it must not)


# The enums are str subclasses: each member equals the string nanocuda's calls already take,
# so ``ManagedMemoryLocationType.DEVICE`` and ``"device"`` are interchangeable.


class AddressModeType(_StrEnum):
    """Texture addressing outside [0, 1)."""

    WRAP = "wrap"
    CLAMP = "clamp"
    MIRROR = "mirror"
    BORDER = "border"


class ArrayFormatType(_StrEnum):
    """Element format of a CUDA array."""

    UINT8 = "uint8"
    UINT16 = "uint16"
    UINT32 = "uint32"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    FLOAT16 = "float16"
    FLOAT32 = "float32"


class CompilerBackendType(_StrEnum):
    """Which compiler a Program uses."""

    NVRTC = "NVRTC"
    NVVM = "NVVM"
    NVJITLINK = "nvJitLink"
    DRIVER = "driver"


class FilterModeType(_StrEnum):
    """Texture filtering."""

    POINT = "point"
    LINEAR = "linear"


class GraphConditionalType(_StrEnum):
    """Kind of a conditional graph node."""

    IF = "if"
    WHILE = "while"
    SWITCH = "switch"


class GraphMemoryType(_StrEnum):
    """Where a graph's memory lives."""

    DEVICE = "device"
    HOST = "host"
    MANAGED = "managed"


class ManagedMemoryLocationType(_StrEnum):
    """ManagedMemoryResourceOptions.preferred_location_type."""

    DEVICE = "device"
    HOST = "host"
    HOST_NUMA = "host_numa"


class ObjectCodeFormatType(_StrEnum):
    """ObjectCode.code_type."""

    PTX = "ptx"
    CUBIN = "cubin"
    LTOIR = "ltoir"
    FATBIN = "fatbin"
    OBJECT = "object"
    LIBRARY = "library"


class PCHStatusType(_StrEnum):
    """What became of an NVRTC precompiled header."""

    CREATED = "created"
    NOT_ATTEMPTED = "not_attempted"
    FAILED = "failed"


class ReadModeType(_StrEnum):
    """Texture reads: the stored type or normalized floats."""

    ELEMENT_TYPE = "element_type"
    NORMALIZED_FLOAT = "normalized_float"


class SourceCodeType(_StrEnum):
    """Program's code_type."""

    CXX = "c++"
    PTX = "ptx"
    NVVM = "nvvm"


class VirtualMemoryAccessType(_StrEnum):
    """Access granted to a virtual memory mapping."""

    READ_WRITE = "rw"
    READ = "r"


class VirtualMemoryAllocationType(_StrEnum):
    """Kind of physical memory behind a virtual mapping."""

    PINNED = "pinned"
    MANAGED = "managed"


class VirtualMemoryGranularityType(_StrEnum):
    """Which allocation granularity to round to."""

    MINIMUM = "minimum"
    RECOMMENDED = "recommended"


class VirtualMemoryHandleType(_StrEnum):
    """Shareable handle kind of a physical allocation."""

    POSIX_FD = "posix_fd"
    WIN32_KMT = "win32_kmt"
    FABRIC = "fabric"


class VirtualMemoryLocationType(_StrEnum):
    """Where physical memory of a virtual mapping lives."""

    DEVICE = "device"
    HOST = "host"
    HOST_NUMA = "host_numa"
    HOST_NUMA_CURRENT = "host_numa_current"


class WorkqueueSharingScopeType(_StrEnum):
    """Sharing scope of a green context's work queues."""

    DEVICE_CTX = "device_ctx"
    GREEN_CTX_BALANCED = "green_ctx_balanced"
