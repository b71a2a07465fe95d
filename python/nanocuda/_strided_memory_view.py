"""cuda.core's StridedMemoryView: what an array says about its memory, read by nanocuda's C++
array reader (DLPack, CUDA array interface) into the core's array model, exported again
through DLPack, and turned into TMA descriptors by as_tensor_map (see _smv_tensor_map).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Optional, Sequence

from . import _nanocuda, _smv_dlpack
from ._smv_layout import _current_device, _dense, _ints, _numpy_dtype, _user_dtype, _whole_elements
from ._smv_tensor_map import as_tensor_map as _as_tensor_map

__all__ = ["StridedMemoryView", "args_viewable_as_strided_memory"]

_CPU, _CUDA, _CUDA_HOST, _CUDA_MANAGED = 1, 2, 3, 13
_DEVICE_ACCESSIBLE = frozenset((_CUDA, _CUDA_HOST, _CUDA_MANAGED))
_ON_DEVICE = frozenset((_CUDA, _CUDA_MANAGED))
_internal = _nanocuda._internal
_view = _internal.array_view
_is_contiguous = _internal.is_contiguous
_KNOWN = frozenset(row[0] for row in _internal.dtype_table())  # the core's dtype names
_LAZY: dict = {}  # type -> whether from_dlpack(obj, -1) may defer reading (C exchange API)


def _stream_int(call: str, stream_ptr: object) -> Optional[int]:
    # an int, -1, None, or a handle object that converts to one (cuda.bindings' CUstream)
    if stream_ptr is None or (type(stream_ptr) is int and -1 <= stream_ptr < 1 << 64):
        return stream_ptr
    if type(stream_ptr) is int:
        raise ValueError(f"{call}: stream_ptr must be -1 (no ordering) or a CUstream handle "
                         f"(0 to 2**64-1), got {stream_ptr}")
    if not isinstance(stream_ptr, (bool, float, str, bytes)) and hasattr(type(stream_ptr), "__int__"):
        return _stream_int(call, int(stream_ptr))
    raise TypeError(f"{call}: stream_ptr must be an int (a CUstream handle), -1 or None, "
                    f"got {type(stream_ptr).__name__}")


def _interface(obj: Any, attr: str, kind: str, call: str) -> dict:
    """``obj``'s array-interface dict (``attr``), checked: v3 or above, no mask."""
    iface = getattr(obj, attr, None)
    if not isinstance(iface, dict):
        raise BufferError(f"{call}: a {type(obj).__name__} has no {attr}")
    if iface.get("version", 3) < 3:
        raise BufferError(f"{call}: only {kind} Array Interface v3 or above is supported")
    if iface.get("mask") is not None:
        raise BufferError(f"{call}: mask is not supported")
    return iface


def _ambiguous(call: str) -> BufferError:
    return BufferError(f"{call}: stream=None is ambiguous with view(): pass stream_ptr=-1 for no "
                       "stream ordering, or the consumer stream's handle")


class StridedMemoryView:
    """Metadata of a strided array (cuda.core.utils.StridedMemoryView): ptr, shape, strides
    (in elements, always given), dtype (a numpy dtype; None for an itemsize-only view),
    device_id (-1 for CPU memory from DLPack), is_device_accessible, readonly, exporting_obj.
    Made by from_dlpack, from_cuda_array_interface, from_array_interface, from_any_interface
    or from_buffer; exported again through __dlpack__."""

    __slots__ = {
        "ptr": "The address of the first element, as an int.",
        "shape": "The shape, a tuple of ints (outermost first).",
        "device_id": "The device ordinal holding the memory; -1 for CPU memory.",
        "is_device_accessible": "True when kernels can read the memory (device, pinned, managed).",
        "readonly": "True when the producer marked the memory read-only.",
        "exporting_obj": "The object the view was made from (kept alive by the view).",
        "_strides": "", "_dtype": "", "_dtype_name": "", "_item": "", "_contiguous": "",
        "_pending": "", "_device_type": "", "_dims": "", "_implicit": "",
    }

    def __init__(self, obj: Any = None, stream_ptr: Optional[int] = None) -> None:
        if obj is None:
            warnings.warn("Constructing an empty StridedMemoryView is deprecated; use "
                          "StridedMemoryView.from_any_interface(obj, stream_ptr) or from_buffer",
                          DeprecationWarning, stacklevel=2)
            self._set(0, (), (), None, None, 1, _CPU, -1, False, False, None)
        elif hasattr(obj, "__dlpack__"):
            warnings.warn("Constructing a StridedMemoryView(obj) from a DLPack object is deprecated; "
                          "use StridedMemoryView.from_dlpack(obj, stream_ptr) or from_any_interface",
                          DeprecationWarning, stacklevel=2)
            self._from_dlpack(obj, stream_ptr, "StridedMemoryView", lazy=False)
        elif hasattr(obj, "__cuda_array_interface__"):
            warnings.warn("Constructing a StridedMemoryView from a CUDA-array-interface-supporting "
                          "object is deprecated; use StridedMemoryView.from_cuda_array_interface",
                          DeprecationWarning, stacklevel=2)
            self._from_cai(obj, stream_ptr, "StridedMemoryView")
        else:
            raise BufferError(f"StridedMemoryView: a {type(obj).__name__} does not support any data "
                              "exchange protocol (DLPack __dlpack__ or __cuda_array_interface__)")

    @classmethod
    def from_dlpack(cls, obj: Any, stream_ptr: Optional[int] = None) -> "StridedMemoryView":
        """A view of a DLPack object (torch/CuPy/numpy arrays, nanocuda Buffers). stream_ptr:
        the consumer stream's handle, or -1 for no stream ordering; None is ambiguous
        (BufferError) for CPU and CUDA memory, as in cuda.core."""
        if not hasattr(obj, "__dlpack__"):
            raise BufferError(f"StridedMemoryView.from_dlpack: a {type(obj).__name__} has no __dlpack__")
        self = cls.__new__(cls)
        self._from_dlpack(obj, stream_ptr, "StridedMemoryView.from_dlpack", lazy=True)
        return self

    def _from_dlpack(self, obj: Any, stream_ptr: Optional[int], call: str, lazy: bool) -> None:
        if type(stream_ptr) is not int or not -1 <= stream_ptr < 1 << 64:
            stream_ptr = _stream_int(call, stream_ptr)
        if stream_ptr != -1:
            kind = obj.__dlpack_device__()[0] if hasattr(obj, "__dlpack_device__") else None
            if kind not in _DEVICE_ACCESSIBLE and kind != _CPU:
                raise BufferError(f"{call}: device not supported (DLPack device type {kind}); "
                                  "nanocuda views CPU, CUDA, pinned and managed memory")
            if stream_ptr is None and kind in (_CPU, _CUDA):
                raise _ambiguous(call)
            if stream_ptr and kind != _CPU:  # the producer orders its work before this stream
                self._fill(_smv_dlpack.StreamedExport(obj, stream_ptr), stream_ptr, call, cai=False)
                self.exporting_obj = obj
                return
        elif lazy:
            t = type(obj)
            fast = _LAZY.get(t)
            if fast is None:
                fast = _LAZY[t] = hasattr(t, "__dlpack_c_exchange_api__")
            if fast and type(self) is StridedMemoryView:
                # Read on first use of a field (_read_pending): as_tensor_map(box) then goes
                # straight to TensorMap.tiled(obj), which reads the tensor once in C++.
                self._pending = obj
                return
        self._fill(obj, stream_ptr, call, cai=False)

    def _read_pending(self) -> None:
        # An unread view's fields are C descriptors (interop/smv_fast.cpp) that call this on
        # first use; _set clears _pending, and a failed read leaves it for the next use.
        self._fill(self._pending, -1, "StridedMemoryView.from_dlpack", cai=False)

    @classmethod
    def from_cuda_array_interface(cls, obj: Any, stream_ptr: Optional[int] = None) -> "StridedMemoryView":
        """A view of a __cuda_array_interface__ (v3) object; with stream_ptr (not -1), that
        stream first waits for the producer's stream, as the interface asks. None is
        ambiguous (BufferError), as in cuda.core."""
        self = cls.__new__(cls)
        self._from_cai(obj, stream_ptr, "StridedMemoryView.from_cuda_array_interface")
        return self

    def _from_cai(self, obj: Any, stream_ptr: Optional[int], call: str) -> None:
        iface = getattr(obj, "__cuda_array_interface__", None)
        if isinstance(iface, dict) and iface.get("version", 3) < 3 and _is_torch_tensor(obj):
            # PyTorch still publishes v2 (no "stream" key); like cuda.core, read torch tensors
            # through DLPack, which orders their work before stream_ptr.
            if stream_ptr is None:
                raise _ambiguous(call)
            self._from_dlpack(obj, stream_ptr, call, lazy=False)
            self.exporting_obj = obj
            return
        iface = _interface(obj, "__cuda_array_interface__", "CUDA", call)
        if stream_ptr is None:
            raise _ambiguous(call)
        stream_ptr = _stream_int(call, stream_ptr)
        dtype = _user_dtype(call, iface.get("typestr"), "typestr")
        _whole_elements(call, iface.get("strides"), getattr(dtype, "itemsize", 1))
        if getattr(dtype, "name", dtype) in _KNOWN:
            self._fill(obj, stream_ptr, call, cai=True)
        else:  # structured/opaque elements ("|V16"): the C++ reader locates the memory only
            probe = type("_Probe", (), {"__cuda_array_interface__": {
                "data": iface["data"], "shape": (0,), "typestr": "|u1", "version": 3}})()
            self._fill(probe, -1, call, cai=True)
            shape = tuple(iface["shape"])
            strides = iface.get("strides")
            strides = _dense(shape) if strides is None else tuple(_whole_elements(call, strides, dtype.itemsize))
            self._set(self.ptr, shape, strides, dtype, None, dtype.itemsize, self._device_type,
                      self.device_id, True, bool(iface["data"][1]), obj)
        self.exporting_obj, self._implicit = obj, iface.get("strides") is None
        producer = iface.get("stream")
        if producer and stream_ptr != -1 and producer != stream_ptr:
            dev = self.device_id if self.device_id >= 0 else None
            _nanocuda.Stream.from_handle(stream_ptr, dev).wait(_nanocuda.Stream.from_handle(producer, dev))

    @classmethod
    def from_any_interface(cls, obj: Any, stream_ptr: Optional[int] = None) -> "StridedMemoryView":
        """A view of any array: DLPack first, then the CUDA array interface, then numpy's
        __array_interface__ (host memory)."""
        if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
            return cls.from_dlpack(obj, stream_ptr)
        if hasattr(obj, "__cuda_array_interface__"):
            return cls.from_cuda_array_interface(obj, stream_ptr)
        if hasattr(obj, "__array_interface__"):
            return cls.from_array_interface(obj)
        raise BufferError(f"StridedMemoryView.from_any_interface: a {type(obj).__name__} does not support "
                          "any data exchange protocol (DLPack, __cuda_array_interface__ or __array_interface__)")

    @classmethod
    def from_array_interface(cls, obj: Any) -> "StridedMemoryView":
        """A view of host memory described by numpy's __array_interface__ (v3); device_id is
        the current device, as in cuda.core."""
        call = "StridedMemoryView.from_array_interface"
        iface = _interface(obj, "__array_interface__", "NumPy", call)
        dtype = _user_dtype(call, iface["typestr"], "typestr")
        ptr, readonly = iface["data"]
        shape = tuple(iface["shape"])
        strides = iface.get("strides")
        strides = _dense(shape) if strides is None else tuple(_whole_elements(call, strides, dtype.itemsize))
        self = cls.__new__(cls)
        self._set(ptr, shape, strides, dtype, None, dtype.itemsize, _CPU, _current_device(), False,
                  bool(readonly), obj)
        self._implicit = iface.get("strides") is None
        return self

    @classmethod
    def from_buffer(cls, buffer: Any, shape: Sequence[int], strides: Optional[Sequence[int]] = None, *,
                    itemsize: Optional[int] = None, dtype: Any = None,
                    is_readonly: bool = False) -> "StridedMemoryView":
        """A view of a Buffer's memory with this shape, strides (in elements; None for
        C-contiguous) and element type (dtype, or only itemsize: then dtype is None).
        Nothing is synchronized: the Buffer's stream order is the caller's to respect."""
        call = "StridedMemoryView.from_buffer"
        if not isinstance(buffer, _nanocuda.Buffer):
            raise TypeError(f"{call}: buffer must be a nanocuda Buffer, got {type(buffer).__name__}")
        if buffer.is_closed:
            raise ValueError(f"{call}: the Buffer is closed (close() was called)")
        if dtype is None and itemsize is None:
            raise ValueError(f"{call}: itemsize or dtype must be specified")
        if dtype is not None:
            dtype = _user_dtype(call, dtype)
            if itemsize is not None and itemsize != dtype.itemsize:
                raise ValueError(f"{call}: itemsize {itemsize} does not match dtype.itemsize "
                                 f"{dtype.itemsize} ({dtype})")
            itemsize = dtype.itemsize
        elif isinstance(itemsize, bool) or not isinstance(itemsize, int) or itemsize < 1:
            raise ValueError(f"{call}: itemsize must be a positive int, got {itemsize!r}")
        shape = _ints(call, "shape", shape)
        strides = _dense(shape) if strides is None else _ints(call, "strides", strides)
        if any(n < 0 for n in shape) or any(x < 0 for x in strides):
            raise ValueError(f"{call}: shape {shape} and strides {strides} must not be negative")
        if len(strides) != len(shape):
            raise ValueError(f"{call}: {len(strides)} strides for {len(shape)} dimensions")
        extent = 0 if 0 in shape else (1 + sum((n - 1) * x for n, x in zip(shape, strides))) * itemsize
        if extent > buffer.size:
            raise ValueError(f"{call}: shape {shape} with strides {strides} of {itemsize}-byte elements "
                             f"needs the buffer to hold them: Expected at least {extent} bytes, "
                             f"got {buffer.size} bytes.")
        host = buffer.is_host_accessible and not buffer.is_managed
        kind = _CUDA_MANAGED if buffer.is_managed else _CUDA_HOST if host else _CUDA
        self = cls.__new__(cls)
        self._set(buffer.handle, shape, strides, dtype, None, itemsize, kind,
                  -1 if host else buffer.device_id, buffer.is_device_accessible, bool(is_readonly), buffer)
        return self

    def _set(self, ptr: int, shape: tuple, strides: tuple, dtype: Any, name: Optional[str], item: int,
             device_type: int, device_id: int, accessible: bool, readonly: bool, owner: Any) -> None:
        self._pending, self._dims, self._implicit = None, None, False
        self.ptr, self.shape, self._strides = ptr, shape, strides
        self._contiguous = _is_contiguous(shape, strides)
        self._dtype, self._item = dtype, item
        self._dtype_name = name if name is not None else getattr(dtype, "name", None)
        self._device_type, self.device_id, self.is_device_accessible = device_type, device_id, accessible
        self.readonly, self.exporting_obj = readonly, owner

    def _fill(self, obj: Any, stream_ptr: Optional[int], call: str, cai: bool) -> None:
        (ptr, device_type, device_id, name, item, shape, strides, contiguous,
         readonly) = _view(obj, call, cai)
        if not cai and type(obj).__module__ == "numpy":  # unversioned DLPack has no read-only flag
            readonly = readonly or not obj.flags.writeable
        elif device_type == _CUDA and isinstance(obj, _nanocuda.Buffer):
            # Managed memory stays kDLCUDAManaged, as the Buffer itself reports it (cuda.core).
            kind, dev = obj.__dlpack_device__()
            if kind == _CUDA_MANAGED:
                device_type, device_id = kind, dev
        self._set(ptr, shape, strides, None, name, item, device_type,
                  device_id if device_type in _ON_DEVICE else -1, device_type in _DEVICE_ACCESSIBLE,
                  bool(readonly), obj)

    def view(self, layout: Any = None, dtype: Any = None) -> "StridedMemoryView":
        """A view of the same memory with another layout (an object with shape, strides in
        elements and, optionally, itemsize and slice_offset_in_bytes, such as cuda.core's
        strided layouts) and/or another dtype of the same itemsize; no arguments: self."""
        if layout is None and dtype is None:
            return self
        call = "StridedMemoryView.view"
        item, new = self._item, self._dtype
        if dtype is not None:
            new = _user_dtype(call, dtype)
            if layout is None and new.itemsize != item:
                raise ValueError(f"{call}: dtype {new} has itemsize {new.itemsize}, but the view's "
                                 f"elements are {item} bytes; pass a layout for the new itemsize")
            item = new.itemsize
        ptr, shape, strides = self.ptr, self.shape, self._strides
        if layout is not None:
            if not hasattr(layout, "shape"):
                raise TypeError(f"{call}: layout must be a strided layout (an object with shape and, optionally, "
                                f"strides in elements), got {type(layout).__name__}")
            shape = tuple(layout.shape)
            strides = getattr(layout, "strides", None)
            strides = _dense(shape) if strides is None else tuple(strides)
            item = getattr(layout, "itemsize", item)
            if new is not None and new.itemsize != item:
                raise ValueError(f"{call}: dtype itemsize {new.itemsize} does not match the layout's {item}")
            ptr += int(getattr(layout, "slice_offset_in_bytes", 0))
        out = StridedMemoryView.__new__(StridedMemoryView)
        out._set(ptr, shape, strides, new, None if dtype is not None else self._dtype_name, item,
                 self._device_type, self.device_id, self.is_device_accessible, self.readonly,
                 self.exporting_obj)
        return out

    def copy_from(self, other: "StridedMemoryView", stream: Any = None, allocator: Any = None,
                  blocking: Optional[bool] = None) -> None:
        """Copy `other`'s elements into this view, in the order of `stream`: host to device,
        device to host or device to device (host to host is NotImplementedError, as in
        cuda.core). Both views must have the same shape and element size and be contiguous
        (size-0/size-1 dimensions aside); a strided copy raises ValueError. `blocking`
        (default: only when host memory is involved) waits for the copy; `allocator` is
        accepted for cuda.core's signature and unused (no temporaries are needed)."""
        _copy_views("StridedMemoryView.copy_from", self, other, stream, blocking)

    def copy_to(self, other: "StridedMemoryView", stream: Any = None, allocator: Any = None,
                blocking: Optional[bool] = None) -> None:
        """Copy this view's elements into `other` (see copy_from)."""
        _copy_views("StridedMemoryView.copy_to", other, self, stream, blocking)

    def __dlpack_device__(self) -> tuple:
        """(DLPack device type, device id) of the memory: (1, 0) for the CPU."""
        kind = self._device_type
        return (kind, 0 if kind in (_CPU, _CUDA_HOST) else self.device_id)

    def __dlpack__(self, *, stream: Any = None, max_version: Optional[tuple] = None,
                   dl_device: Optional[tuple] = None, copy: Optional[bool] = None) -> Any:
        """A DLPack capsule of the view (versioned when max_version >= (1, 0)); it keeps the
        view, and so its exporting object, alive. The memory is shared, never copied."""
        return _smv_dlpack.export(self, stream, max_version, dl_device, copy)

    def _dltensor_parts(self) -> tuple:
        return _smv_dlpack.dltensor_parts(self)

    @property
    def strides(self) -> Optional[tuple]:
        """Strides in elements: the producer's; None where an array interface gave none (a
        C-contiguous array, as cuda.core reports it); dense ones for from_buffer without strides."""
        return None if self._implicit else self._strides

    @property
    def dtype(self) -> Any:
        """The element type as a numpy dtype; None for a from_buffer view made with itemsize
        only. bfloat16/float8 need the ml_dtypes package (NotImplementedError without it)."""
        if self._dtype is None and self._dtype_name is not None:
            self._dtype = _numpy_dtype(self._dtype_name)
        return self._dtype

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for s in self.shape:
            n *= s
        return n

    as_tensor_map = _as_tensor_map

    def __repr__(self) -> str:
        name = self._dtype_name if self._dtype_name is not None else (
            "NoneType" if self._dtype is None else str(self._dtype))
        return (f"StridedMemoryView(ptr={self.ptr:#x}, shape={self.shape}, strides={self.strides}, "
                f"dtype={name}, device_id={self.device_id}, "
                f"is_device_accessible={self.is_device_accessible}, readonly={self.readonly})")



def _copy_views(call: str, dst: StridedMemoryView, src: Any, stream: Any, blocking: Optional[bool]) -> None:
    for view in (dst, src):  # copy_to's other view is the destination
        if not isinstance(view, StridedMemoryView):
            raise TypeError(f"{call}: the other view must be a StridedMemoryView, got {type(view).__name__}")
    if dst.shape != src.shape or dst._item != src._item:
        raise ValueError(f"{call}: the views differ: shape {src.shape} of {src._item}-byte elements "
                         f"into shape {dst.shape} of {dst._item}-byte elements")
    if not dst._contiguous or not src._contiguous:
        raise ValueError(f"{call}: both views must be C-contiguous; strided copies "
                         "are not supported")
    if dst.readonly:
        raise ValueError(f"{call}: the destination view is read-only")
    if not dst.is_device_accessible and not src.is_device_accessible:
        raise NotImplementedError(f"{call}: host-to-host copies are not implemented (cuda.core copies "
                                  "host<->device and device<->device); copy with numpy")
    host = dst.device_id < 0 or src.device_id < 0
    nbytes = src.size * src._item
    if nbytes:
        _nanocuda.copy(dst.ptr, src.ptr, size=nbytes, stream=stream)
    if blocking or (blocking is None and host):
        if stream is None:
            _nanocuda.Stream.legacy(_nanocuda.Device()).sync()
        else:  # a nanocuda/cuda.core Stream (sync) or a torch/CuPy one (synchronize)
            (getattr(stream, "sync", None) or stream.synchronize)()


_smv_dlpack.install(StridedMemoryView)
# from_dlpack(obj, -1) and as_tensor_map(box) of its unread view run in C, and the fields read
# an unread view on first use (interop/smv_fast.cpp).
_internal.smv_install(StridedMemoryView, StridedMemoryView._read_pending,
                      StridedMemoryView.__dict__["from_dlpack"].__func__, _as_tensor_map)


class _ViewableArg:
    """An argument of an args_viewable_as_strided_memory function: .view(stream_ptr)."""

    __slots__ = ("obj", "has_dlpack")

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        self.has_dlpack = hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")

    def view(self, stream_ptr: Optional[int] = None) -> StridedMemoryView:
        return StridedMemoryView.from_any_interface(self.obj, stream_ptr)


def args_viewable_as_strided_memory(arg_indices: tuple) -> Callable:
    """Decorator: the positional arguments at `arg_indices` get a .view(stream_ptr) method
    returning their StridedMemoryView (cuda.core.utils.args_viewable_as_strided_memory)."""
    if not isinstance(arg_indices, (tuple, list)) or not all(isinstance(i, int) for i in arg_indices):
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


def _is_torch_tensor(obj: Any) -> bool:
    """A torch.Tensor (or subclass), told without importing torch."""
    return hasattr(obj, "__dlpack__") and any(
        c.__name__ == "Tensor" and c.__module__ == "torch" for c in type(obj).__mro__)
