"""StridedMemoryView's DLPack export: __dlpack__'s rules, and the Python half of its C exchange
API (__dlpack_c_exchange_api__, whose table is C++: python/ext/interop/smv_exchange.cpp)."""

from __future__ import annotations

import struct
from typing import Any, Optional

from . import _nanocuda

_internal = _nanocuda._internal
_export_view = _internal.export_view
_CODES = {row[0]: row[1:4] for row in _internal.dtype_table()}  # name -> (code, bits, lanes)
_ON_DEVICE = frozenset((2, 13))
_DEVICE_ACCESSIBLE = frozenset((2, 3, 13))


def _dtype_name(view: Any, call: str) -> str:
    dtype, name = view._dtype, view._dtype_name
    if dtype is None and name is None:
        raise BufferError(f"{call}: the view has no dtype (made with itemsize only); "
                          "DLPack export needs one: use view(dtype=...)")
    if dtype is not None:
        if dtype.fields is not None:
            raise BufferError(f"{call}: Structured dtypes are not supported for DLPack export ({dtype})")
        if not dtype.isnative:
            raise BufferError(f"{call}: Non-native-endian dtypes are not supported for DLPack export ({dtype})")
        name = dtype.name
    return name


def export(view: Any, stream: Any, max_version: Optional[tuple], dl_device: Optional[tuple],
           copy: Optional[bool]) -> Any:
    """The capsule of view.__dlpack__ (the view is its owner)."""
    call = "StridedMemoryView.__dlpack__"
    if copy:
        raise BufferError(f"{call}: copy=True is not supported (the view shares its memory)")
    if dl_device is not None and tuple(dl_device) != view.__dlpack_device__():
        # cuda.core's words (its users match on them); the view's own device is also taken.
        raise BufferError(f"{call}: Sorry, not supported: dl_device other than None (or the view's device "
                          f"{view.__dlpack_device__()}), got {tuple(dl_device)}")
    if isinstance(max_version, tuple) and (len(max_version) != 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in max_version)):
        raise BufferError(f"Expected max_version tuple[int, int], got {max_version!r}")
    if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)):
        raise TypeError(f"{call}: stream must be an int or None, got {type(stream).__name__}")
    name = _dtype_name(view, call)
    return _export_view(view, view.ptr, *view.__dlpack_device__(), name, list(view.shape),
                        list(view._strides), max_version, view.readonly, call)


def dltensor_parts(view: Any) -> tuple:
    """The DLTensor fields for dltensor_from_py_object_no_sync; shape and strides as int64
    bytes the view keeps (the C side points into them)."""
    name = _dtype_name(view, "StridedMemoryView.__dlpack_c_exchange_api__")
    if name not in _CODES:
        raise BufferError(f"StridedMemoryView.__dlpack_c_exchange_api__: Unsupported dtype for DLPack "
                          f"export: {name}")
    dims = view._dims
    if dims is None:
        dims = view._dims = struct.pack(f"{2 * len(view.shape)}q", *view.shape, *view._strides)
    return (view.ptr, *view.__dlpack_device__(), *_CODES[name], len(view.shape), dims)


def install(cls: type) -> None:
    """Gives `cls` (StridedMemoryView) its __dlpack_c_exchange_api__ capsule."""

    def from_parts(ptr: int, device_type: int, device_id: int, dtype_name: str, shape: tuple,
                   strides: tuple, readonly: bool, owner: Any) -> Any:
        # A view of a tensor the exchange API hands over; `owner` frees it with the view.
        view = cls.__new__(cls)
        view._set(ptr, shape, strides, None, dtype_name, _CODES[dtype_name][1] // 8, device_type,
                  device_id if device_type in _ON_DEVICE else -1, device_type in _DEVICE_ACCESSIBLE,
                  readonly, owner)
        return view

    cls.__dlpack_c_exchange_api__ = _internal.smv_exchange_api(cls, from_parts)
    cls.__c_dlpack_exchange_api__ = cls.__dlpack_c_exchange_api__  # the older name


class StreamedExport:
    """`obj` whose __dlpack__ is asked with the consumer's stream (what cuda.core passes on)."""

    __slots__ = ("obj", "stream")

    def __init__(self, obj: Any, stream: int) -> None:
        self.obj, self.stream = obj, stream

    def __dlpack_device__(self) -> tuple:
        return self.obj.__dlpack_device__()

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.obj.__dlpack__(stream=self.stream, **kwargs)
