"""ResourceDescriptor, TextureObjectOptions and TextureObject: sampled reads of an array or memory."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Union

from .. import _nanocuda
from ..typing import AddressModeType, FilterModeType, ReadModeType
from ._array import OpaqueArray, _bool, _core, _int, _normalize_array_format, _options
from ._base import _Formatted, _Owner
from ._mipmapped_array import MipmappedArray

_AddressModes = Union[AddressModeType, str, tuple]


def _normalize_enum(name: str, value: Any, enum_type: type[enum.Enum]) -> Any:
    """``value`` as ``enum_type`` (a member, or its name as a str); ValueError otherwise."""
    if isinstance(value, enum_type):
        return value
    choices = ", ".join(m.value for m in enum_type)  # type: ignore[attr-defined]
    if isinstance(value, str):
        try:
            return enum_type(value)
        except ValueError:
            pass
    article = "an" if enum_type.__name__[0] in "AEIOU" else "a"
    raise ValueError(f"{name} must be {article} {enum_type.__name__} ({choices}), got {value!r}")


def _normalize_address_modes(address_mode: Any) -> tuple[AddressModeType, AddressModeType, AddressModeType]:
    """A 3-tuple of AddressModeType from one mode (every axis) or a tuple of 1-3 (the last one
    repeats for the axes not given)."""
    if isinstance(address_mode, str):
        mode = _normalize_enum("address_mode", address_mode, AddressModeType)
        return (mode, mode, mode)
    if not isinstance(address_mode, (tuple, list)):
        raise TypeError("address_mode must be an AddressModeType, its name, or a tuple of 1-3 of them, "
                        f"got {type(address_mode).__name__}")
    if not 1 <= len(address_mode) <= 3:
        raise ValueError(f"address_mode tuple must have 1-3 entries (one per axis), got {len(address_mode)}")
    modes = [_normalize_enum(f"address_mode[{i}]", m, AddressModeType) for i, m in enumerate(address_mode)]
    modes += [modes[-1]] * (3 - len(modes))
    return (modes[0], modes[1], modes[2])


@dataclass
class TextureObjectOptions:
    """How a TextureObject samples (cuda.core's fields): address_mode (one mode or a tuple of
    1-3), filter_mode, read_mode, normalized_coords, srgb, disable_trilinear_optimization,
    seamless_cubemap, max_anisotropy (0..16), the mipmap filter, bias and clamps, and
    border_color (4 floats, or None for zero). Enum fields take their names as str too."""

    address_mode: _AddressModes = AddressModeType.CLAMP
    filter_mode: Union[FilterModeType, str] = FilterModeType.POINT
    read_mode: Union[ReadModeType, str] = ReadModeType.ELEMENT_TYPE
    normalized_coords: bool = False
    srgb: bool = False
    disable_trilinear_optimization: bool = False
    seamless_cubemap: bool = False
    max_anisotropy: int = 0
    mipmap_filter_mode: Union[FilterModeType, str] = FilterModeType.POINT
    mipmap_level_bias: float = 0.0
    min_mipmap_level_clamp: float = 0.0
    max_mipmap_level_clamp: float = 0.0
    border_color: Union[tuple, None] = None

    def __post_init__(self) -> None:
        self.filter_mode = _normalize_enum("filter_mode", self.filter_mode, FilterModeType)
        self.read_mode = _normalize_enum("read_mode", self.read_mode, ReadModeType)
        self.mipmap_filter_mode = _normalize_enum("mipmap_filter_mode", self.mipmap_filter_mode, FilterModeType)


class ResourceDescriptor(_Formatted):
    """What a TextureObject or SurfaceObject reads: an OpaqueArray, a MipmappedArray, or a
    Buffer as a typed 1D fetch (from_linear) or a row-pitched 2D image (from_pitch2d). It keeps
    its source alive."""

    __slots__ = ("_source",)
    _factory = ("ResourceDescriptor.from_opaque_array, from_mipmapped_array, from_linear "
                "or from_pitch2d")

    @classmethod
    def from_opaque_array(cls, array: OpaqueArray) -> ResourceDescriptor:
        """A descriptor over an OpaqueArray (for textures, and for surfaces when the array was
        made with is_surface_load_store=True)."""
        if not isinstance(array, OpaqueArray):
            raise TypeError(f"ResourceDescriptor.from_opaque_array: array must be an OpaqueArray, got {type(array).__name__}")
        return cls._wrap(_core.resource_from_array(array._impl), _source=array)

    @classmethod
    def from_mipmapped_array(cls, mipmapped_array: MipmappedArray) -> ResourceDescriptor:
        """A descriptor over a MipmappedArray (textures only)."""
        if not isinstance(mipmapped_array, MipmappedArray):
            raise TypeError("ResourceDescriptor.from_mipmapped_array: mipmapped_array must be a MipmappedArray, "
                            f"got {type(mipmapped_array).__name__}")
        return cls._wrap(_core.resource_from_mipmapped(mipmapped_array._impl), _source=mipmapped_array)

    @classmethod
    def from_linear(cls, buffer: Any, *, format: Any, num_channels: int,
                    size_bytes: Union[int, None] = None) -> ResourceDescriptor:
        """``buffer`` (a Buffer) as a typed 1D fetch of ``size_bytes`` (default: buffer.size)."""
        call = "ResourceDescriptor.from_linear"
        if not isinstance(buffer, _nanocuda.Buffer):
            raise TypeError(f"{call}: buffer must be a Buffer, got {type(buffer).__name__}")
        fmt = _normalize_array_format(format, call)
        size = None if size_bytes is None else _int(size_bytes, "size_bytes", call)
        return cls._wrap(_core.resource_from_linear(buffer, fmt.value, _int(num_channels, "num_channels", call), size),
                         _source=buffer)

    @classmethod
    def from_pitch2d(cls, buffer: Any, *, format: Any, num_channels: int, width: int, height: int,
                     pitch_bytes: int) -> ResourceDescriptor:
        """``buffer`` (a Buffer) as ``height`` rows of ``width`` elements, ``pitch_bytes`` apart
        (the pitch must meet the device's texture_pitch_alignment)."""
        call = "ResourceDescriptor.from_pitch2d"
        if not isinstance(buffer, _nanocuda.Buffer):
            raise TypeError(f"{call}: buffer must be a Buffer, got {type(buffer).__name__}")
        fmt = _normalize_array_format(format, call)
        impl = _core.resource_from_pitch2d(buffer, fmt.value, _int(num_channels, "num_channels", call),
                                           _int(width, "width", call), _int(height, "height", call),
                                           _int(pitch_bytes, "pitch_bytes", call))
        return cls._wrap(impl, _source=buffer)

    @property
    def kind(self) -> str:
        """'array', 'mipmapped_array', 'linear' or 'pitch2d'."""
        return self._impl.kind

    @property
    def source(self) -> Any:
        """The OpaqueArray, MipmappedArray or Buffer read."""
        return self._source

    @property
    def _size_bytes(self) -> int:
        return self._impl.size_bytes

    @property
    def size_bytes(self) -> int:
        """Bytes bound (linear and pitch2d; an array's storage size; 0 for a mipmapped array)."""
        return self._impl.size_bytes

    @property
    def width(self) -> int:
        """pitch2d: the width in elements (else 0)."""
        return self._impl.width

    @property
    def height(self) -> int:
        """pitch2d: the number of rows (else 0)."""
        return self._impl.height

    @property
    def pitch_bytes(self) -> int:
        """pitch2d: bytes between rows (else 0)."""
        return self._impl.pitch_bytes


class _Bound(_Owner):
    """What TextureObject and SurfaceObject share: a handle over a ResourceDescriptor they keep."""

    __slots__ = ("_resource",)

    @property
    def is_closed(self) -> bool:
        """Whether close() was called."""
        return self._impl.handle == 0

    @property
    def resource(self) -> ResourceDescriptor:
        """The ResourceDescriptor it reads (and, for a surface, writes)."""
        return self._resource

    def __repr__(self) -> str:
        return f"<nanocuda.texture.{type(self).__name__} handle={self.handle:#x} over {self._resource!r}>"


class TextureObject(_Bound):
    """A bindless texture (CUtexObject): pass ``handle`` to a kernel as cudaTextureObject_t. Keeps
    its ResourceDescriptor (and so the memory read) alive. Made by Device.create_texture_object."""

    __slots__ = ("_options",)
    _factory = "Device.create_texture_object"

    @property
    def options(self) -> TextureObjectOptions:
        """The TextureObjectOptions it was made with."""
        return self._options


def _float(value: Any, name: str, call: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise TypeError(f"{call}: {name} must be a number, got {type(value).__name__} {value!r}")
    return float(value)


def _resource_arg(resource: Any, call: str) -> ResourceDescriptor:
    if not isinstance(resource, ResourceDescriptor):
        raise TypeError(f"{call}: resource must be a ResourceDescriptor, got {type(resource).__name__}")
    return resource


def _create_texture_object(device: Any, resource: Any, options: Any) -> TextureObject:
    call = "Device.create_texture_object"
    resource = _resource_arg(resource, call)
    options = _options(TextureObjectOptions, TextureObjectOptions() if options is None else options, call)
    o = options
    try:
        modes = _normalize_address_modes(o.address_mode)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{call}: {e}") from None
    max_anisotropy = _int(o.max_anisotropy, "max_anisotropy", call)
    border = None
    if o.border_color is not None:
        if isinstance(o.border_color, (str, bytes)) or not hasattr(o.border_color, "__iter__"):
            raise TypeError(f"{call}: border_color must be a tuple of 4 floats or None, got "
                            f"{type(o.border_color).__name__}")
        border = [_float(c, f"border_color[{i}]", call) for i, c in enumerate(o.border_color)]
    impl = _core.create_texture(
        device.device_id, resource._impl, [m.value for m in modes], str(o.filter_mode), str(o.read_mode),
        *(_bool(getattr(o, f), f, call) for f in ("normalized_coords", "srgb", "disable_trilinear_optimization",
                                                   "seamless_cubemap")),
        int(max_anisotropy), str(o.mipmap_filter_mode), _float(o.mipmap_level_bias, "mipmap_level_bias", call),
        _float(o.min_mipmap_level_clamp, "min_mipmap_level_clamp", call),
        _float(o.max_mipmap_level_clamp, "max_mipmap_level_clamp", call), border)
    return TextureObject._wrap(impl, _resource=resource, _options=options)
