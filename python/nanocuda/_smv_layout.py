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


def _typestr_dtype(call: str, typestr: Any) -> Any:
    import numpy

    try:
        return numpy.dtype(typestr)
    except TypeError as e:
        raise TypeError(f"{call}: typestr {typestr!r} is not an element type numpy knows ({e})") from None


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
