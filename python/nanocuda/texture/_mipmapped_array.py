"""MipmappedArray and MipmappedArrayOptions: a CUDA array with a chain of halving levels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import _nanocuda
from ..typing import ArrayFormatType
from ._array import OpaqueArray, _core, _int, _normalize_array_format, _options, _shape_tuple


@dataclass
class MipmappedArrayOptions:
    """Options for Device.create_mipmapped_array: as OpaqueArrayOptions, plus ``num_levels``
    (>= 1; each level halves every dimension, down to 1)."""

    shape: tuple[int, ...]
    format: Any
    num_channels: int
    num_levels: int
    is_surface_load_store: bool = False


class MipmappedArray:
    """A CUDA mipmapped array, sampled through a TextureObject; get_level(i) gives one level as
    an OpaqueArray (which keeps this storage alive).

    Made by Device.create_mipmapped_array.
    """

    __slots__ = ("_impl", "__weakref__")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("MipmappedArray cannot be instantiated directly; use Device.create_mipmapped_array")

    @classmethod
    def _wrap(cls, impl: Any) -> MipmappedArray:
        self = object.__new__(cls)
        self._impl = impl
        return self

    @property
    def handle(self) -> int:
        """The CUmipmappedArray as an int (0 once closed)."""
        return self._impl.handle

    @property
    def is_closed(self) -> bool:
        """Whether close() was called."""
        return self._impl.is_closed

    @property
    def shape(self) -> tuple[int, ...]:
        """The extent of level 0, in elements."""
        return self._impl.shape

    @property
    def format(self) -> ArrayFormatType:
        """The element format."""
        return ArrayFormatType(self._impl.format)

    @property
    def num_channels(self) -> int:
        """Channels per element (1, 2 or 4)."""
        return self._impl.num_channels

    @property
    def num_levels(self) -> int:
        """How many levels the array has."""
        return self._impl.num_levels

    @property
    def is_surface_load_store(self) -> bool:
        """True when made with is_surface_load_store=True."""
        return self._impl.is_surface_load_store

    @property
    def device(self) -> _nanocuda.Device:
        """The Device the array lives on."""
        return _nanocuda.Device(self._impl.device_id)

    def get_level(self, level: int) -> OpaqueArray:
        """Level ``level`` (0 is the base) as an OpaqueArray that keeps this array's storage alive."""
        return OpaqueArray._wrap(self._impl.level(_int(level, "level", "MipmappedArray.get_level")))

    def close(self) -> None:
        """Drops this object's reference to the storage (idempotent); it is destroyed once no
        level or texture holds it."""
        self._impl.close()

    def __enter__(self) -> MipmappedArray:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<nanocuda.texture.{self._impl!r}>"


def _create_mipmapped_array(device: Any, options: Any) -> MipmappedArray:
    call = "Device.create_mipmapped_array"
    options = _options(MipmappedArrayOptions, options, call)
    fmt = _normalize_array_format(options.format, call)
    impl = _core.create_mipmapped(device.device_id, _shape_tuple(options.shape, call), fmt.value,
                                  _int(options.num_channels, "num_channels", call),
                                  bool(options.is_surface_load_store), _int(options.num_levels, "num_levels", call))
    return MipmappedArray._wrap(impl)
