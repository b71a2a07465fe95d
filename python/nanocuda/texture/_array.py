"""OpaqueArray and OpaqueArrayOptions: a CUDA array, the storage textures and surfaces read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import _nanocuda
from ..typing import ArrayFormatType
from ._base import _Formatted, _Owner

_core = _nanocuda._internal.texture


def _normalize_array_format(format: Any, call: str) -> ArrayFormatType:
    """An ArrayFormatType from an ArrayFormatType, its name ("float32") or a NumPy dtype (or type)."""
    if isinstance(format, ArrayFormatType):
        return format
    if isinstance(format, str):
        name = format
    elif isinstance(format, type) or type(format).__module__ == "numpy" or hasattr(format, "itemsize"):
        import numpy  # only reached with a NumPy object in hand, so NumPy is already loaded

        try:
            name = numpy.dtype(format).name
        except TypeError:
            name = None
        if name is None:
            raise ValueError(f"{call}: format must be an ArrayFormatType, its name or a NumPy dtype, got {format!r}")
    else:
        raise ValueError(f"{call}: format must be an ArrayFormatType, its name or a NumPy dtype, "
                         f"got {type(format).__name__} {format!r}")
    return ArrayFormatType(_core.check_format(name, call))  # the core names any unknown format


def _shape_tuple(shape: Any, call: str) -> tuple[int, ...]:
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"{call}: shape must be a tuple of ints ((width,), (width, height) or "
                        f"(width, height, depth)), got {type(shape).__name__}")
    dims = tuple(shape)
    for i, d in enumerate(dims):
        if isinstance(d, bool) or not hasattr(d, "__index__"):
            raise TypeError(f"{call}: shape must be a tuple of ints; shape[{i}] is {type(d).__name__}")
    return tuple(_int(d, f"shape[{i}]", call) for i, d in enumerate(dims))


def _options(cls: type, options: Any, call: str) -> Any:
    """``options`` as a ``cls``: an instance as is, a dict converted (unknown keys are a TypeError)."""
    if isinstance(options, dict):
        try:
            return cls(**options)
        except TypeError as e:
            raise TypeError(f"{call}: bad {cls.__name__} dict: {e}") from None
    if not isinstance(options, cls):
        raise TypeError(f"{call}: options must be provided as an object of type {cls.__name__} "
                        f"(or a dict of its fields), got {type(options).__name__}")
    return options


def _int(value: Any, name: str, call: str) -> int:
    """``value`` as an int; TypeError naming ``call`` and ``name`` for a bool, float, str, ..."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{call}: {name} must be an int, got {type(value).__name__} {value!r}")
    if not -2**63 <= int(value) < 2**63:  # the core takes a C++ long long
        raise ValueError(f"{call}: {name} must be in [{-2**63}, {2**63 - 1}], got {int(value)}")
    return int(value)


def _bool(value: Any, name: str, call: str) -> bool:
    """``value`` as a bool; TypeError naming ``call`` and ``name`` for a str, int, None, ... (a
    flag given as 'no' must not read as True)."""
    if not isinstance(value, bool) and type(value).__name__ != "bool_":  # numpy.bool_ too
        raise TypeError(f"{call}: {name} must be a bool, got {type(value).__name__} {value!r}")
    return bool(value)


def _stream_arg(stream: Any, call: str) -> Any:
    if stream is None:
        raise TypeError(f"{call}: stream is required (a Stream or GraphBuilder expected)")
    return stream


@dataclass
class OpaqueArrayOptions:
    """Options for Device.create_opaque_array: ``shape`` ((width,), (width, height) or
    (width, height, depth) in elements), ``format`` (an ArrayFormatType, its name or a NumPy
    dtype), ``num_channels`` (1, 2 or 4) and ``is_surface_load_store`` (bindable as a surface)."""

    shape: tuple[int, ...]
    format: Any
    num_channels: int
    is_surface_load_store: bool = False


class _ArrayBase(_Owner, _Formatted):
    """What OpaqueArray and MipmappedArray share: the shape, format and surface flag of level 0."""

    __slots__ = ()

    @property
    def shape(self) -> tuple[int, ...]:
        """The extent in elements (level 0's for a MipmappedArray)."""
        return self._impl.shape

    @property
    def is_surface_load_store(self) -> bool:
        """True when made with is_surface_load_store=True (bindable as a SurfaceObject)."""
        return self._impl.is_surface_load_store


class OpaqueArray(_ArrayBase):
    """A CUDA array: driver-laid-out storage read through a TextureObject or SurfaceObject.

    Made by Device.create_opaque_array or MipmappedArray.get_level. It has no device pointer;
    data moves in and out by copy_from/copy_to against a Buffer or host buffer.
    """

    __slots__ = ()
    _factory = "Device.create_opaque_array"

    @property
    def element_bytes(self) -> int:
        """Bytes per element (format size * channels)."""
        return self._impl.element_bytes

    @property
    def size_bytes(self) -> int:
        """Bytes of storage: prod(shape) * element_bytes."""
        return self._impl.size_bytes

    def copy_from(self, src: Any, *, stream: Any) -> None:
        """Copies the whole array's bytes from ``src`` (a Buffer or a contiguous host buffer of at
        least size_bytes) in the order of ``stream`` (a Stream or GraphBuilder)."""
        self._impl.copy_from(src, _stream_arg(stream, "OpaqueArray.copy_from"))

    def copy_to(self, dst: Any, *, stream: Any) -> Any:
        """Copies the whole array into ``dst`` (a Buffer or a writable contiguous host buffer of at
        least size_bytes) in the order of ``stream``; returns ``dst``."""
        self._impl.copy_to(dst, _stream_arg(stream, "OpaqueArray.copy_to"))
        return dst


def _array_args(cls: type, options: Any, call: str) -> tuple[Any, tuple[int, ...], str, int, bool]:
    """``options`` (a ``cls`` or a dict of its fields) checked: (options, shape, format name,
    num_channels, is_surface_load_store), the arguments both array factories pass the core."""
    options = _options(cls, options, call)
    fmt = _normalize_array_format(options.format, call)
    return (options, _shape_tuple(options.shape, call), fmt.value,
            _int(options.num_channels, "num_channels", call),
            _bool(options.is_surface_load_store, "is_surface_load_store", call))


def _create_opaque_array(device: Any, options: Any) -> OpaqueArray:
    _, *args = _array_args(OpaqueArrayOptions, options, "Device.create_opaque_array")
    return OpaqueArray._wrap(_core.create_array(device.device_id, *args))
