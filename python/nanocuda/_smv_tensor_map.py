"""StridedMemoryView.as_tensor_map: cuda.core's arguments (options objects or dicts, its enums)
onto nanocuda's TensorMap.tiled, with cuda.core's wording for its argument errors."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from . import _nanocuda

_tiled_from_pointer = _nanocuda.TensorMap.tiled_from_pointer
_tiled = _nanocuda.TensorMap.tiled
_CALL = "StridedMemoryView.as_tensor_map"
_OPTION_KEYS = ("box_dim", "element_strides", "data_type", "interleave", "swizzle", "l2_promotion",
                "oob_fill")


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


def _data_type(data_type: Any, view_dtype: Optional[str]) -> Any:
    if data_type is None:
        if view_dtype is None:
            raise TypeError(f"{_CALL}: the view has no dtype (made with itemsize only); pass data_type=")
        return view_dtype
    name = getattr(data_type, "name", None)  # numpy dtypes, cuda.core's TensorMapDataType
    if isinstance(name, str):
        return name
    if isinstance(data_type, str) or (isinstance(data_type, type) and hasattr(data_type, "__name__")):
        return data_type
    raise TypeError(f"{_CALL}: data_type must be a numpy dtype, a dtype name or a TensorMapDataType, "
                    f"got {type(data_type).__name__} {data_type!r}")


def _element_bytes(dtype: Any) -> Optional[int]:
    name = str(dtype).lower() if isinstance(dtype, str) else dtype
    if name in ("tfloat32", "float32_ftz", "tfloat32_ftz"):
        return 4
    try:
        import numpy

        return numpy.dtype(name).itemsize
    except (ImportError, TypeError):
        return None  # packed TMA types (16u4_align8b...): the shape is taken as given


def _options(options: Any) -> dict:
    if isinstance(options, dict):
        unknown = [k for k in options if k not in _OPTION_KEYS]
        if unknown:
            raise TypeError(f"{_CALL}: unknown option key {unknown[0]!r} in options; "
                            f"TensorMapDescriptorOptions has {', '.join(_OPTION_KEYS)}")
        if "box_dim" not in options:
            raise TypeError(f"{_CALL}: options needs 'box_dim'")
        return dict(options)
    if not hasattr(options, "box_dim"):
        raise TypeError(f"{_CALL}: options must be a TensorMapDescriptorOptions or a dict, "
                        f"got {type(options).__name__}")
    return {k: getattr(options, k, None) for k in _OPTION_KEYS}


def _check_geometry(rank: int, box_dim: Any, element_strides: Any) -> None:
    """cuda.core's argument rules, with its wording (the encoder checks the rest)."""
    try:
        box = tuple(box_dim)
    except TypeError:
        raise TypeError(f"{_CALL}: box_dim must be a tuple of ints, got {type(box_dim).__name__}") from None
    if not 1 <= len(box) <= 5:
        raise ValueError(f"{_CALL}: rank must be between 1 and 5, got a box_dim of {len(box)}")
    if not 1 <= rank <= 5:
        raise ValueError(f"{_CALL}: rank must be between 1 and 5, got a {rank}-dimensional view")
    if len(box) != rank:
        raise ValueError(f"{_CALL}: box_dim must have {rank} elements (the view's rank), got {len(box)}")
    for i, b in enumerate(box):
        if isinstance(b, int) and not 1 <= b <= 256:
            raise ValueError(f"{_CALL}: box_dim[{i}] must be in [1, 256], got {b}")
    if element_strides is not None and len(tuple(element_strides)) != rank:
        raise ValueError(f"{_CALL}: element_strides must have {rank} elements (the view's rank), "
                         f"got {len(tuple(element_strides))}")


def _renamed(e: Exception) -> Exception:
    return type(e)(str(e).replace("TensorMap.tiled_from_pointer", _CALL, 1).replace("TensorMap.tiled", _CALL, 1))


def as_tensor_map(self: Any, box_dim: Optional[Sequence[int]] = None, *, options: Any = None,
                  element_strides: Optional[Sequence[int]] = None, data_type: Any = None,
                  interleave: Any = None, swizzle: Any = None, l2_promotion: Any = None,
                  oob_fill: Any = None) -> "_nanocuda.TensorMap":
    """A tiled TMA descriptor of this memory (nanocuda.TensorMap). Arguments as cuda.core's:
    box_dim and the options as keywords, or options= (a TensorMapDescriptorOptions or a dict
    of its fields), not both; unset options mean cuda.core's defaults (no swizzle, no L2
    promotion, zero fill)."""
    plain = (element_strides is None and data_type is None and interleave is None and swizzle is None
             and l2_promotion is None and oob_fill is None)
    if options is not None:
        if box_dim is not None or not plain:
            raise TypeError(f"{_CALL}: Specify either options or the individual tensor map arguments, "
                            "not both")
        o = _options(options)
        box_dim, element_strides, data_type = o["box_dim"], o.get("element_strides"), o.get("data_type")
        interleave, swizzle = o.get("interleave"), o.get("swizzle")
        l2_promotion, oob_fill = o.get("l2_promotion"), o.get("oob_fill")
        plain = False
    if box_dim is None:
        raise TypeError(f"{_CALL}: box_dim is required (or options=)")
    pending = self._pending
    if pending is not None and plain:
        # a from_dlpack view not yet read: one C++ read of the object (its strides and
        # device checked there), as TensorMap.tiled(tensor, box) does
        try:
            return _tiled(pending, box_dim if type(box_dim) is tuple else tuple(box_dim),
                          interleave="none", swizzle="none", l2_promotion="none", oob_fill="zero")
        except (ValueError, TypeError) as e:  # named as the call the user made
            if isinstance(e, ValueError):
                _check_geometry(len(self.shape), box_dim, None)
            raise _renamed(e) from None
    if not self.is_device_accessible:
        raise ValueError(f"{_CALL}: the view must be device-accessible, but its memory is on the CPU; "
                         "a tensor map needs device (or pinned/managed) memory")
    if plain and self._contiguous and self._dtype_name is not None:
        # the common call, as_tensor_map(box): cuda.core's defaults, no per-option parsing
        try:
            return _tiled_from_pointer(self.ptr, self._dtype_name, self.shape, None,
                                       box=box_dim if type(box_dim) is tuple else tuple(box_dim),
                                       interleave="none", swizzle="none", l2_promotion="none",
                                       oob_fill="zero")
        except (ValueError, TypeError) as e:
            if isinstance(e, ValueError):
                _check_geometry(len(self.shape), box_dim, None)
            raise _renamed(e) from None
    _check_geometry(len(self.shape), box_dim, element_strides)
    dtype = _data_type(data_type, self._dtype_name)
    item, shape = self._item, tuple(self.shape)
    strides_bytes = None if self._contiguous else tuple(s * item for s in self._strides)
    size = _element_bytes(dtype) if data_type is not None else item
    if size and size != item and shape and (self._strides[-1] == 1 or shape[-1] == 1):
        # another element type over the same bytes (a uint8 Buffer read as float32): the
        # innermost dimension is counted in the new elements
        if shape[-1] * item % size:
            raise ValueError(f"{_CALL}: the innermost dimension ({shape[-1]} x {item} bytes) is not a "
                             f"whole number of {size}-byte {dtype} elements")
        shape = shape[:-1] + (shape[-1] * item // size,)
    try:
        return _tiled_from_pointer(
            self.ptr, dtype, shape, strides_bytes, box=tuple(box_dim),
            element_strides=None if element_strides is None else tuple(element_strides),
            interleave=_enum_option(interleave, ("INTERLEAVE_",), "none"),
            swizzle=_enum_option(swizzle, ("SWIZZLE_",), "none"),
            l2_promotion=_enum_option(l2_promotion, ("L2_PROMOTION_", "L2_"), "none"),
            oob_fill=_enum_option(oob_fill, ("OOB_FILL_", "FLOAT_OOB_FILL_"), "zero"))
    except (ValueError, TypeError) as e:
        raise _renamed(e) from None
