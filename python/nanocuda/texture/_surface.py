"""SurfaceObject: kernel-side reads and writes of an OpaqueArray made with is_surface_load_store."""

from __future__ import annotations

from typing import Any

from ._array import _core
from ._texture import _Bound, _resource_arg


class SurfaceObject(_Bound):
    """A bindless surface (CUsurfObject): pass ``handle`` to a kernel as cudaSurfaceObject_t.
    Keeps its ResourceDescriptor (and so the array) alive. Made by Device.create_surface_object."""

    __slots__ = ()
    _factory = "Device.create_surface_object"


def _create_surface_object(device: Any, resource: Any) -> SurfaceObject:
    resource = _resource_arg(resource, "Device.create_surface_object")
    return SurfaceObject._wrap(_core.create_surface(device.device_id, resource._impl), _resource=resource)
