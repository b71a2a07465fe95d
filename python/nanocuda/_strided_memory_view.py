"""cuda.core's StridedMemoryView: what an array says about its memory, read by nanocuda's C++
array reader (DLPack, CUDA array interface), and as_tensor_map through nanocuda's TensorMap.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Sequence

from . import _nanocuda

__all__ = ["StridedMemoryView", "args_viewable_as_strided_memory"]

_CPU, _CUDA, _CUDA_HOST, _CUDA_MANAGED = 1, 2, 3, 13
_DEVICE_ACCESSIBLE = frozenset((_CUDA, _CUDA_HOST, _CUDA_MANAGED))
_ON_DEVICE = frozenset((_CUDA, _CUDA_MANAGED))
_view = _nanocuda._internal.array_view
_tiled_from_pointer = _nanocuda.TensorMap.tiled_from_pointer
_tiled = _nanocuda.TensorMap.tiled


def _check_stream_ptr(call: str, stream_ptr: object) -> None:
    if stream_ptr is not None and (isinstance(stream_ptr, bool) or not isinstance(stream_ptr, int)):
        raise TypeError(f"{call}: stream_ptr must be an int (a CUstream handle), -1 or None, "
                        f"got {type(stream_ptr).__name__}")


# cuda.core's TensorMap* enums (and ints/strings) -> nanocuda's spelling; None is cuda.core's
# default (NONE) for every option, which is not nanocuda's default for swizzle/L2.
def _enum_option(value: Any, prefixes: Sequence[str], none: Any) -> Any:
    if value is None:
        return none
    if isinstance(value, (int, str)) and not hasattr(value, "name"):
        return value
    name = str(getattr(value, "name", value)).upper()
    for p in prefixes:
        if name.startswith(p):
            name = name[len(p):]
    if name in ("NONE", "0"):
        return none
    if name in ("NAN_REQUEST_ZERO_FMA", "NAN"):
        return "nan"
    return name.replace("_BYTES", "B").replace("B_ATOM", "B_atom")


class StridedMemoryView:
    """Metadata of a strided array (cuda.core.utils.StridedMemoryView): ptr, shape, strides
    (in elements; None when C-contiguous), dtype, device_id (-1 on the CPU),
    is_device_accessible, readonly, exporting_obj. Made from DLPack first, then the CUDA
    array interface; a BufferError when the object has neither."""

    __slots__ = {
        "ptr": "The address of the first element, as an int.",
        "shape": "The shape, a tuple of ints (outermost first).",
        "device_id": "The device ordinal holding the memory; -1 for CPU memory.",
        "is_device_accessible": "True when kernels can read the memory (device, pinned, managed).",
        "readonly": "True when the producer marked the memory read-only.",
        "exporting_obj": "The object the view was made from (kept alive by the view).",
        "_strides": "", "_dtype_name": "", "_item": "", "_contiguous": "", "_pending": "",
    }

    def __init__(self, obj: Any = None, stream_ptr: Optional[int] = None) -> None:
        if obj is None:
            raise TypeError("StridedMemoryView: pass an object with __dlpack__ or "
                            "__cuda_array_interface__ (or use from_dlpack / from_cuda_array_interface)")
        if hasattr(obj, "__dlpack__"):
            self._fill(obj, stream_ptr, "StridedMemoryView.from_dlpack", cai=False)
        elif hasattr(obj, "__cuda_array_interface__"):
            self._fill(obj, stream_ptr, "StridedMemoryView.from_cuda_array_interface", cai=True)
        else:
            raise BufferError(f"StridedMemoryView: a {type(obj).__name__} supports neither DLPack "
                              "(__dlpack__) nor the CUDA array interface")

    @classmethod
    def from_dlpack(cls, obj: Any, stream_ptr: Optional[int] = None) -> "StridedMemoryView":
        """A view of a DLPack object (torch/CuPy/numpy arrays, nanocuda Buffers)."""
        if not hasattr(obj, "__dlpack__"):
            raise BufferError(f"StridedMemoryView.from_dlpack: a {type(obj).__name__} has no __dlpack__")
        if stream_ptr is not None and type(stream_ptr) is not int:
            _check_stream_ptr("StridedMemoryView.from_dlpack", stream_ptr)
        self = cls.__new__(cls)
        # Read on first use: as_tensor_map(box) then goes straight to TensorMap.tiled(obj),
        # which reads the tensor once in C++ (no Python-side copy of its metadata).
        self._pending = (obj, stream_ptr)
        return self

    def __getattr__(self, name: str) -> Any:
        # Only reached for a slot not yet filled: a from_dlpack view reads its object now.
        try:
            pending = object.__getattribute__(self, "_pending")
        except AttributeError:
            pending = None
        if pending is None or name not in StridedMemoryView.__slots__ or name == "_pending":
            raise AttributeError(f"'StridedMemoryView' object has no attribute '{name}'")
        self._fill(pending[0], pending[1], "StridedMemoryView.from_dlpack", cai=False)
        return object.__getattribute__(self, name)

    @classmethod
    def from_cuda_array_interface(cls, obj: Any, stream_ptr: Optional[int] = None) -> "StridedMemoryView":
        """A view of a __cuda_array_interface__ object; with stream_ptr (not -1), that stream
        first waits for the producer's stream, as the interface asks."""
        if not hasattr(obj, "__cuda_array_interface__"):
            raise BufferError(f"StridedMemoryView.from_cuda_array_interface: a {type(obj).__name__} "
                              "has no __cuda_array_interface__")
        self = cls.__new__(cls)
        self._fill(obj, stream_ptr, "StridedMemoryView.from_cuda_array_interface", cai=True)
        return self

    @classmethod
    def from_any_interface(cls, obj: Any, stream_ptr: Optional[int] = None) -> "StridedMemoryView":
        """A view of any array: DLPack first, then the CUDA array interface, then numpy's
        __array_interface__ (host memory)."""
        if hasattr(obj, "__dlpack__") or hasattr(obj, "__cuda_array_interface__"):
            return cls(obj, stream_ptr)
        return cls.from_array_interface(obj)

    @classmethod
    def from_array_interface(cls, obj: Any) -> "StridedMemoryView":
        """A view of host memory described by numpy's __array_interface__ (device_id -1)."""
        iface = getattr(obj, "__array_interface__", None)
        if not isinstance(iface, dict):
            raise BufferError(f"StridedMemoryView.from_array_interface: a {type(obj).__name__} has no "
                              "__array_interface__")
        import numpy

        dtype = numpy.dtype(iface["typestr"])
        ptr, readonly = iface["data"]
        strides = iface.get("strides")
        return cls._make(ptr, tuple(iface["shape"]), None if strides is None else
                         tuple(_whole_elements("StridedMemoryView.from_array_interface", strides, dtype.itemsize)),
                         dtype.name, dtype.itemsize, device_id=-1, device_accessible=False,
                         readonly=bool(readonly), owner=obj)

    @classmethod
    def from_buffer(cls, buffer: Any, shape: Sequence[int], strides: Optional[Sequence[int]] = None, *,
                    itemsize: Optional[int] = None, dtype: Any = None,
                    is_readonly: bool = False) -> "StridedMemoryView":
        """A view of a Buffer's memory with this shape, strides (in elements; None for
        C-contiguous) and element type (dtype, or only itemsize: unsigned ints of that size).
        Nothing is synchronized: the Buffer's stream order is the caller's to respect."""
        call = "StridedMemoryView.from_buffer"
        if not isinstance(buffer, _nanocuda.Buffer):
            raise TypeError(f"{call}: buffer must be a nanocuda Buffer, got {type(buffer).__name__}")
        if dtype is None and itemsize is None:
            raise ValueError(f"{call}: pass dtype= or itemsize= (the size of one element)")
        if dtype is not None:
            import numpy

            dtype = numpy.dtype(dtype)
            if itemsize is not None and itemsize != dtype.itemsize:
                raise ValueError(f"{call}: itemsize={itemsize} but {dtype.name} elements are "
                                 f"{dtype.itemsize} bytes")
            name, item = dtype.name, dtype.itemsize
        else:
            if itemsize not in (1, 2, 4, 8):
                raise ValueError(f"{call}: itemsize must be 1, 2, 4 or 8 without a dtype, got {itemsize!r}")
            name, item = f"uint{8 * itemsize}", itemsize
        shape = tuple(int(n) for n in shape)
        if any(n < 0 for n in shape) or (strides is not None and any(int(x) < 0 for x in strides)):
            raise ValueError(f"{call}: shape {shape} and strides must not be negative")
        if strides is not None and len(strides) != len(shape):
            raise ValueError(f"{call}: {len(strides)} strides for {len(shape)} dimensions")
        dense = _dense_strides(shape)
        strides = None if strides is None or tuple(strides) == dense else tuple(int(x) for x in strides)
        extent = 0 if 0 in shape else (1 + sum((n - 1) * x for n, x in zip(shape, strides or dense))) * item
        if extent > buffer.size:
            raise ValueError(f"{call}: shape {shape} with strides {strides or dense} of {item}-byte "
                             f"elements reaches {extent} bytes, past the buffer's {buffer.size}")
        host = buffer.is_host_accessible and not buffer.is_managed
        return cls._make(buffer.handle, shape, strides, name, item,
                         device_id=-1 if host else buffer.device_id,
                         device_accessible=buffer.is_device_accessible, readonly=bool(is_readonly),
                         owner=buffer)

    @classmethod
    def _make(cls, ptr: int, shape: tuple, strides: Optional[tuple], dtype_name: str, item: int, *,
              device_id: int, device_accessible: bool, readonly: bool, owner: Any) -> "StridedMemoryView":
        self = cls.__new__(cls)
        self._pending = None
        self.ptr, self.shape, self._strides = ptr, shape, strides
        self._contiguous = strides is None
        self._dtype_name, self._item = dtype_name, item
        self.device_id, self.is_device_accessible = device_id, device_accessible
        self.readonly, self.exporting_obj = readonly, owner
        return self

    def copy_from(self, other: "StridedMemoryView", stream: Any = None, allocator: Any = None,
                  blocking: Optional[bool] = None) -> None:
        """Copy `other`'s elements into this view, in the order of `stream`: host to device,
        device to host or device to device. Both views must have the same shape and element
        size and be C-contiguous (a strided copy raises ValueError). `blocking` (default: only
        when host memory is involved) waits for the copy; `allocator` is accepted for
        cuda.core's signature and unused (no temporaries are needed)."""
        _copy_views("StridedMemoryView.copy_from", self, other, stream, blocking)

    def copy_to(self, other: "StridedMemoryView", stream: Any = None, allocator: Any = None,
                blocking: Optional[bool] = None) -> None:
        """Copy this view's elements into `other` (see copy_from)."""
        _copy_views("StridedMemoryView.copy_to", other, self, stream, blocking)

    def _fill(self, obj: Any, stream_ptr: Optional[int], call: str, cai: bool) -> None:
        self._pending = None  # read now (as_tensor_map's lazy path then finds the slot set)
        if stream_ptr is not None and type(stream_ptr) is not int:
            _check_stream_ptr(call, stream_ptr)
        (self.ptr, device_type, device_id, self._dtype_name, self._item, self.shape,
         strides, self._contiguous) = _view(obj, call, cai)
        self._strides = None if self._contiguous else strides
        self.exporting_obj = obj
        self.is_device_accessible = device_type in _DEVICE_ACCESSIBLE
        self.device_id = device_id if device_type in _ON_DEVICE else -1
        if cai:
            iface = obj.__cuda_array_interface__
            self.readonly = bool(iface["data"][1])
            producer = iface.get("stream")
            if producer and stream_ptr is not None and stream_ptr != -1 and producer != stream_ptr:
                dev = self.device_id if self.device_id >= 0 else None
                _nanocuda.Stream.from_handle(stream_ptr, dev).wait(_nanocuda.Stream.from_handle(producer, dev))
        elif type(obj).__module__ == "numpy":  # DLPack carries no read-only flag numpy sets
            self.readonly = not obj.flags.writeable
        else:
            self.readonly = False

    @property
    def strides(self) -> Optional[tuple]:
        """Strides in elements, for every layout (the dense ones for a C-contiguous array, as cuda.core gives)."""
        return self._strides if self._strides is not None else _dense_strides(tuple(self.shape))

    @property
    def dtype(self) -> Any:
        """The element type as a numpy dtype (its name when numpy is missing or has none)."""
        try:
            import numpy
        except ImportError:
            return self._dtype_name
        try:
            return numpy.dtype(self._dtype_name)
        except TypeError:
            return self._dtype_name

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for s in self.shape:
            n *= s
        return n

    def as_tensor_map(self, box_dim: Optional[Sequence[int]] = None, *, options: Any = None,
                      element_strides: Optional[Sequence[int]] = None, data_type: Any = None,
                      interleave: Any = None, swizzle: Any = None, l2_promotion: Any = None,
                      oob_fill: Any = None) -> "_nanocuda.TensorMap":
        """A tiled TMA descriptor of this memory (nanocuda.TensorMap). Arguments as cuda.core's
        (box_dim, or options= a TensorMapDescriptorOptions-like object); unset options mean
        cuda.core's defaults (no swizzle, no L2 promotion, zero fill)."""
        pending = self._pending
        if (pending is not None and box_dim is not None and options is None and element_strides is None
                and data_type is None and interleave is None and swizzle is None and l2_promotion is None
                and oob_fill is None):
            # a from_dlpack view not yet read: one C++ read of the object (its strides and
            # device checked there), as TensorMap.tiled(tensor, box) does
            try:
                return _tiled(pending[0], box_dim if type(box_dim) is tuple else tuple(box_dim),
                              interleave="none", swizzle="none", l2_promotion="none", oob_fill="zero")
            except (ValueError, TypeError) as e:  # named as the call the user made
                raise type(e)(str(e).replace("TensorMap.tiled", "StridedMemoryView.as_tensor_map", 1)) from None
        if (options is None and element_strides is None and data_type is None and interleave is None
                and swizzle is None and l2_promotion is None and oob_fill is None
                and self._strides is None and self.is_device_accessible and box_dim is not None):
            # the common call, as_tensor_map(box): cuda.core's defaults, no per-option parsing
            return _tiled_from_pointer(self.ptr, self._dtype_name, self.shape, None,
                                       box=box_dim if type(box_dim) is tuple else tuple(box_dim),
                                       interleave="none", swizzle="none", l2_promotion="none",
                                       oob_fill="zero")
        if options is not None:
            box_dim = box_dim if box_dim is not None else getattr(options, "box_dim", None)
            element_strides = element_strides if element_strides is not None else getattr(options, "element_strides", None)
            data_type = data_type if data_type is not None else getattr(options, "data_type", None)
            interleave = interleave if interleave is not None else getattr(options, "interleave", None)
            swizzle = swizzle if swizzle is not None else getattr(options, "swizzle", None)
            l2_promotion = l2_promotion if l2_promotion is not None else getattr(options, "l2_promotion", None)
            oob_fill = oob_fill if oob_fill is not None else getattr(options, "oob_fill", None)
        if box_dim is None:
            raise TypeError("StridedMemoryView.as_tensor_map: box_dim is required")
        if not self.is_device_accessible:
            raise ValueError("StridedMemoryView.as_tensor_map: the memory is on the CPU; a tensor "
                             "map needs device memory")
        dtype = self._dtype_name if data_type is None else getattr(data_type, "name", data_type)
        strides_bytes = None
        if self._strides is not None:
            item = self._item
            strides_bytes = tuple(s * item for s in self._strides)
        return _tiled_from_pointer(
            self.ptr, dtype, self.shape, strides_bytes, box=tuple(box_dim),
            element_strides=None if element_strides is None else tuple(element_strides),
            interleave=_enum_option(interleave, ("INTERLEAVE_",), "none"),
            swizzle=_enum_option(swizzle, ("SWIZZLE_",), "none"),
            l2_promotion=_enum_option(l2_promotion, ("L2_PROMOTION_", "L2_"), "none"),
            oob_fill=_enum_option(oob_fill, ("OOB_FILL_", "FLOAT_OOB_FILL_"), "zero"))

    def __repr__(self) -> str:
        return (f"StridedMemoryView(ptr={self.ptr:#x}, shape={self.shape}, strides={self.strides}, "
                f"dtype={self._dtype_name}, device_id={self.device_id}, "
                f"is_device_accessible={self.is_device_accessible}, readonly={self.readonly})")


def _dense_strides(shape: tuple) -> tuple:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _whole_elements(call: str, byte_strides: Sequence[int], item: int) -> list:
    if any(x % item for x in byte_strides):
        raise ValueError(f"{call}: strides {tuple(byte_strides)} (bytes) are not whole {item}-byte elements")
    return [x // item for x in byte_strides]


def _copy_views(call: str, dst: StridedMemoryView, src: Any, stream: Any, blocking: Optional[bool]) -> None:
    if not isinstance(src, StridedMemoryView):
        raise TypeError(f"{call}: the other view must be a StridedMemoryView, got {type(src).__name__}")
    if dst.shape != src.shape or dst._item != src._item:
        raise ValueError(f"{call}: the views differ: shape {src.shape} of {src._item}-byte elements "
                         f"into shape {dst.shape} of {dst._item}-byte elements")
    if not dst._contiguous or not src._contiguous:
        raise ValueError(f"{call}: both views must be C-contiguous; strided copies "
                         "are not supported")
    if dst.readonly:
        raise ValueError(f"{call}: the destination view is read-only")
    nbytes = src.size * src._item
    if nbytes:
        _nanocuda.copy(dst.ptr, src.ptr, size=nbytes, stream=stream)
    host = dst.device_id < 0 or src.device_id < 0
    if blocking or (blocking is None and host):
        if stream is None:
            _nanocuda.Stream.legacy(_nanocuda.Device()).sync()
        else:  # a nanocuda/cuda.core Stream (sync) or a torch/CuPy one (synchronize)
            (getattr(stream, "sync", None) or stream.synchronize)()


class _ViewableArg:
    """An argument of an args_viewable_as_strided_memory function: .view(stream_ptr)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def view(self, stream_ptr: Optional[int] = None) -> StridedMemoryView:
        return StridedMemoryView(self.obj, stream_ptr)


def args_viewable_as_strided_memory(arg_indices: tuple) -> Callable:
    """Decorator: the positional arguments at `arg_indices` get a .view(stream_ptr) method
    returning their StridedMemoryView (cuda.core.utils.args_viewable_as_strided_memory)."""
    if isinstance(arg_indices, int) or not all(isinstance(i, int) for i in arg_indices):
        raise TypeError("args_viewable_as_strided_memory: arg_indices must be a tuple of ints")

    def decorator(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            args = list(args)
            for i in arg_indices:
                args[i] = _ViewableArg(args[i])
            return func(*args, **kwargs)

        return wrapped

    return decorator
