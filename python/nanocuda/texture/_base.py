"""The bases nanocuda.texture's classes share: a core object made only by its factory, its format
and channels, and the owned driver handle (close, context manager, device)."""

from __future__ import annotations

from typing import Any

from .. import _nanocuda
from ..typing import ArrayFormatType


class _Wrapped:
    """Wraps a core object (``_impl``); users get one from ``_factory``, never from the class."""

    __slots__ = ("_impl", "__weakref__")
    _factory = ""  # what to call instead, named in the error

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"{type(self).__name__} cannot be instantiated directly; use {self._factory}")

    @classmethod
    def _wrap(cls, impl: Any, **fields: Any) -> Any:
        self = object.__new__(cls)
        self._impl = impl
        for name, value in fields.items():  # the subclass's own slots (_source, _resource, ...)
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        return f"<nanocuda.texture.{self._impl!r}>"

    def __reduce__(self) -> Any:
        # The handles (and a descriptor's source) belong to the process that made them.
        raise TypeError(f"cannot pickle a nanocuda.texture.{type(self).__name__}: it holds CUDA handles of the "
                        "process that made it; send the data (copy_to a host buffer) and build it again there")


class _Formatted(_Wrapped):
    """An element format and channel count, read from the core object."""

    __slots__ = ()

    @property
    def format(self) -> ArrayFormatType:
        """The element format."""
        return ArrayFormatType(self._impl.format)

    @property
    def num_channels(self) -> int:
        """Channels per element (1, 2 or 4)."""
        return self._impl.num_channels


class _Owner(_Wrapped):
    """Owns a driver handle: ``handle`` (0 once closed), ``close()`` (idempotent), ``with``."""

    __slots__ = ()

    @property
    def handle(self) -> int:
        """The driver handle (CUarray, CUmipmappedArray, CUtexObject or CUsurfObject) as an int; 0 once closed."""
        return self._impl.handle

    @property
    def is_closed(self) -> bool:
        """Whether close() was called."""
        return self._impl.is_closed

    @property
    def device(self) -> _nanocuda.Device:
        """The Device it lives on."""
        return _nanocuda.Device(self._impl.device_id)

    def close(self) -> None:
        """Drops this object's hold on the handle (idempotent): a texture or surface is destroyed
        at once, an array's storage once nothing else (a level, a texture, a surface) holds it."""
        self._impl.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
