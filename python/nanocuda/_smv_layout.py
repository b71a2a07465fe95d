"""StridedMemoryView's element types and layouts: numpy dtypes from the core's dtype names
and from array-interface typestrs, dense strides, byte strides to element strides."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from . import _nanocuda

_ML_DTYPES = frozenset(row[0] for row in _nanocuda._internal.dtype_table()
                       if row[0].startswith(("bfloat", "float8")))


def _numpy_dtype(name: str) -> Any:
    try:
        import numpy
    except ImportError:  # nanocuda runs without numpy: the name is what it has
        return name
    if name in _ML_DTYPES:
        try:
            import ml_dtypes
        except ImportError:
            raise NotImplementedError(f"StridedMemoryView.dtype: {name} requires `ml_dtypes` "
                                      "(pip install ml_dtypes)") from None
        return numpy.dtype(getattr(ml_dtypes, name))
    return numpy.dtype(name)


def _user_dtype(call: str, dtype: Any, what: str = "dtype") -> Any:
    """A dtype the user passed (a numpy dtype, type or name; an array interface's typestr), or
    TypeError naming ``call`` and ``what``."""
    import numpy

    try:
        return numpy.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"{call}: {what} {dtype!r} is not an element type numpy knows ({e})") from None


def _ints(call: str, name: str, values: Any) -> tuple:
    """``values`` (a sequence of ints) as a tuple, or TypeError naming ``call`` and ``name``."""
    items = None if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__") else tuple(values)
    if items is None or any(isinstance(v, bool) or not hasattr(v, "__index__") for v in items):
        raise TypeError(f"{call}: {name} must be a sequence of ints, got {values!r}")
    return tuple(int(v) for v in items)


def _current_device() -> int:
    try:
        return _nanocuda.Device().device_id
    except (RuntimeError, OSError):  # no driver: host memory belongs to no device
        return -1


def _dense(shape: tuple) -> tuple:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _whole_elements(call: str, byte_strides: Optional[Sequence[int]], item: int) -> list:
    if byte_strides is None:
        return []
    if any(x % item for x in byte_strides):
        raise ValueError(f"{call}: strides {tuple(byte_strides)} (bytes): strides must be divisible "
                         f"by itemsize ({item})")
    return [x // item for x in byte_strides]
