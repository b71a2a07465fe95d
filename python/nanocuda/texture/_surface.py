"""SurfaceObject: kernel-side reads and writes of an OpaqueArray made with is_surface_load_store."""

from __future__ import annotations

from typing import Any

from .. import _nanocuda
from ._array import _core
from ._texture import ResourceDescriptor, _resource_arg


class SurfaceObject:
    """A bindless surface (CUsurfObject): pass ``handle`` to a kernel as cudaSurfaceObject_t.
    Keeps its ResourceDescriptor (and so the array) alive. Made by Device.create_surface_object."""

    __slots__ = ("_impl", "_resource", "__weakref__")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("SurfaceObject cannot be instantiated directly; use Device.create_surface_object")

    @property
    def handle(self) -> int:
        """The CUsurfObject, a 64-bit int (0 once closed)."""
        return self._impl.handle

    @property
    def is_closed(self) -> bool:
        """Whether close() was called."""
        return self._impl.handle == 0

    @property
    def resource(self) -> ResourceDescriptor:
        """The ResourceDescriptor this surface reads and writes."""
        return self._resource

    @property
    def device(self) -> _nanocuda.Device:
        """The Device the surface was made on."""
        return _nanocuda.Device(self._impl.device_id)

    def close(self) -> None:
        """Destroys the surface object now (idempotent)."""
        self._impl.close()

    def __enter__(self) -> SurfaceObject:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<nanocuda.texture.SurfaceObject handle={self.handle:#x} over {self._resource!r}>"


def _create_surface_object(device: Any, resource: Any) -> SurfaceObject:
    resource = _resource_arg(resource, "Device.create_surface_object")
    surf = object.__new__(SurfaceObject)
    surf._impl = _core.create_surface(device.device_id, resource._impl)
    surf._resource = resource
    return surf
