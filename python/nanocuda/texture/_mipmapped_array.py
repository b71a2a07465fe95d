"""MipmappedArray and MipmappedArrayOptions: a CUDA array with a chain of halving levels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._array import OpaqueArray, _ArrayBase, _array_args, _core, _int


@dataclass
class MipmappedArrayOptions:
    """Options for Device.create_mipmapped_array: as OpaqueArrayOptions, plus ``num_levels``
    (>= 1; each level halves every dimension, down to 1)."""

    shape: tuple[int, ...]
    format: Any
    num_channels: int
    num_levels: int
    is_surface_load_store: bool = False


class MipmappedArray(_ArrayBase):
    """A CUDA mipmapped array, sampled through a TextureObject; get_level(i) gives one level as
    an OpaqueArray (which keeps this storage alive).

    Made by Device.create_mipmapped_array.
    """

    __slots__ = ()
    _factory = "Device.create_mipmapped_array"

    @property
    def num_levels(self) -> int:
        """How many levels the array has."""
        return self._impl.num_levels

    def get_level(self, level: int) -> OpaqueArray:
        """Level ``level`` (0 is the base) as an OpaqueArray that keeps this array's storage alive."""
        return OpaqueArray._wrap(self._impl.level(_int(level, "level", "MipmappedArray.get_level")))


def _create_mipmapped_array(device: Any, options: Any) -> MipmappedArray:
    call = "Device.create_mipmapped_array"
    options, *args = _array_args(MipmappedArrayOptions, options, call)
    return MipmappedArray._wrap(_core.create_mipmapped(device.device_id, *args,
                                                       _int(options.num_levels, "num_levels", call)))
