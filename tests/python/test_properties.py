"""Property tests (Hypothesis): launch argument packing against an independent packing
written here with struct/numpy, and TensorMap validation over random geometries (never a
crash; every rejection a ValueError/TypeError naming the rule). The driver half of the
TensorMap property (accepted geometries must encode) is in test_properties_gpu.py."""

import ctypes
import os
import struct

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis", reason="property tests need hypothesis (pip install hypothesis)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from nanocuda import TensorMap  # noqa: E402
from testing_hooks import pack  # noqa: E402

SETTINGS = settings(max_examples=400, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


class DevicePtr:
    """A device array seen through __cuda_array_interface__ (no driver needed to read it)."""

    def __init__(self, ptr: int):
        self.__cuda_array_interface__ = dict(shape=(4,), typestr="<f4", data=(ptr, False), version=3)


# --- the independent model: what bytes a value must become, or None when it must be refused ---
def int_bytes(v: int, size: int):
    lo = {1: -128, 2: -(2**15), 4: -(2**31), 8: -(2**63)}
    hi = {1: 255, 2: 2**16 - 1, 4: 2**32 - 1, 8: 2**64 - 1}
    if size not in lo or not lo[size] <= v <= hi[size]:
        return None
    return (v % (1 << (8 * size))).to_bytes(size, "little")


def expected(value, size: int):
    if isinstance(value, bool):
        return b"\x01" if value and size == 1 else (b"\x00" if size == 1 else None)
    if type(value) is int:
        return int_bytes(value, size)
    if type(value) is float:
        if size == 4:  # rounded like a C cast: past float32's range is inf
            with np.errstate(over="ignore"):
                return np.array(value, dtype=np.float32).tobytes()
        return struct.pack("<d", value) if size == 8 else None
    if isinstance(value, np.generic):
        raw = value.tobytes()
        return raw if len(raw) == size else None
    if isinstance(value, ctypes._SimpleCData):
        raw = bytes(value)
        return raw if len(raw) == size else None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value) if len(value) == size else None
    if isinstance(value, DevicePtr):
        return struct.pack("<Q", value.__cuda_array_interface__["data"][0]) if size == 8 else None
    if isinstance(value, TensorMap):
        return value.to_bytes() if size == 128 else None
    raise AssertionError(type(value))


SIZES = [1, 2, 4, 8, 16, 128]
NP_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
            np.float16, np.float32, np.float64]
CT_TYPES = [ctypes.c_int8, ctypes.c_uint8, ctypes.c_int16, ctypes.c_int32, ctypes.c_uint32,
            ctypes.c_int64, ctypes.c_uint64, ctypes.c_float, ctypes.c_double, ctypes.c_bool]


def np_scalar(draw_bytes: bytes, t):
    return np.frombuffer(draw_bytes[: np.dtype(t).itemsize].ljust(np.dtype(t).itemsize, b"\0"), dtype=t)[0]


def _device_base():
    """A real device allocation when there is a GPU (pointer arguments are checked against
    the driver's idea of where memory lives), else None and no pointer arguments."""
    import nanocuda

    if os.environ.get("NANOCUDA_TEST_DRIVER_VERSION"):
        return None  # the mock driver (scripts/test-driver-versions) runs nothing
    try:
        if nanocuda.Device.count() == 0:
            return None
    except nanocuda.CudaError:
        return None
    _device_base.buf = nanocuda.Buffer(1 << 16)
    return _device_base.buf.ptr


BASE = _device_base()
pointers = (st.integers(0, 4000).map(lambda k: DevicePtr(BASE + 16 * k)) if BASE is not None
            else st.nothing())

values = st.one_of(
    st.integers(min_value=-(2**65), max_value=2**65),
    st.integers(min_value=-300, max_value=300),
    st.floats(allow_nan=False, width=64),
    st.floats(width=32, allow_nan=False).map(float),
    st.booleans(),
    st.tuples(st.binary(min_size=8, max_size=8), st.sampled_from(NP_TYPES)).map(lambda t: np_scalar(*t)),
    st.tuples(st.integers(0, 255), st.sampled_from(CT_TYPES)).map(lambda t: t[1](t[0])),
    st.binary(min_size=0, max_size=24),
    st.binary(min_size=0, max_size=24).map(bytearray),
    pointers,
    st.binary(min_size=128, max_size=128).map(TensorMap.from_bytes),
)


def layout_for(sizes):
    """Natural alignment (CUtensorMap: 64), like the driver's parameter layout."""
    out, at = [], 0
    for s in sizes:
        align = 64 if s == 128 else min(s, 8)
        at = (at + align - 1) // align * align
        out.append((at, s))
        at += s
    return out


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(SIZES), values), min_size=1, max_size=12))
def test_packing_matches_an_independent_packer(params):
    sizes = [s for s, _ in params]
    args = [v for _, v in params]
    layout = layout_for(sizes)
    want = bytearray(layout[-1][0] + layout[-1][1])
    ok = True
    for (offset, size), v in zip(layout, args):
        b = expected(v, size)
        if b is None:
            ok = False
            break
        want[offset:offset + size] = b
    if ok:
        assert pack(layout, "k", *args) == bytes(want)
    else:
        with pytest.raises((TypeError, ValueError), match=r"kernel 'k', parameter \d+"):
            pack(layout, "k", *args)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from([4, 8]), values), min_size=1, max_size=6), st.integers(0, 3))
def test_per_slot_memo_never_changes_a_result(params, repeats):
    """The same launch packed again (slots remember each type's decision) and after other
    types went through the same slots gives the same bytes or the same error."""
    layout = layout_for([s for s, _ in params])
    args = [v for _, v in params]

    def attempt():
        try:
            return pack(layout, "k", *args)
        except (TypeError, ValueError) as e:
            return type(e), str(e)

    first = attempt()
    for _ in range(repeats + 1):
        assert attempt() == first


# Parameter classes: void saxpy(float, const float*, const float*, float*, size_t).
SAXPY = "_Z5saxpyfPKfS0_Pfm"
L5 = [(0, 4), (8, 8), (16, 8), (24, 8), (32, 8)]


@SETTINGS
@given(st.floats(allow_nan=False, width=32), st.integers(0, 2**48), st.integers(0, 2**48),
       st.integers(0, 2**48), st.integers(0, 2**63))
def test_classes_accept_well_typed_calls(a, x, y, out, n):
    got = pack(L5, SAXPY, a, x, y, out, n)
    assert got == struct.pack("<f4xQQQQ", a, x, y, out, n)
    assert got == pack(L5, "saxpy", a, x, y, out, n)  # extern "C": sizes only, same bytes


@SETTINGS
@given(st.integers(0, 4), st.sampled_from(["float", "int", "bool"]))
def test_classes_reject_a_value_of_the_wrong_kind(index, kind):
    args = [1.0, 0, 0, 0, 5]
    args[index] = {"float": 2.5, "int": 7, "bool": True}[kind]
    wrong = (index == 0 and kind in ("int", "bool")) or (index in (1, 2, 3) and kind in ("float", "bool")) \
        or (index == 4 and kind == "float")
    if wrong:
        with pytest.raises(TypeError, match=f"parameter {index} is"):
            pack(L5, SAXPY, *args)
        pack(L5, "saxpy", *args) if kind != "bool" else None  # sizes alone let it through
    else:
        try:
            pack(L5, SAXPY, *args)
        except ValueError as e:  # a size rule (bool into 8 bytes), never a class rule
            assert "signature" not in str(e)


# --- TensorMap validation: random geometries, never a crash, always a named rule ---
DTYPES = {"uint8": 1, "uint16": 2, "uint32": 4, "int32": 4, "uint64": 8, "int64": 8, "float16": 2,
          "float32": 4, "float64": 8, "bfloat16": 2, "tfloat32": 4}


@st.composite
def geometries(draw):
    rank = draw(st.integers(1, 6))
    dtype = draw(st.sampled_from(sorted(DTYPES)))
    shape = draw(st.lists(st.one_of(st.integers(1, 300), st.integers(0, 2**33)), min_size=rank, max_size=rank))
    box = draw(st.lists(st.integers(0, 300), min_size=draw(st.sampled_from([rank, rank, rank, rank - 1])),
                        max_size=rank))
    stride = st.one_of(st.integers(-1, 2**36).map(lambda s: s * 16), st.integers(-16, 2**40))
    strides = draw(st.none() | st.lists(stride, min_size=max(rank - 1, 0), max_size=rank))
    kw = dict(box=box)
    if draw(st.booleans()):
        kw["swizzle"] = draw(st.sampled_from([None, "auto", 0, 32, 64, 128, 96, "none", "128B"]))
    if draw(st.booleans()):
        kw["interleave"] = draw(st.sampled_from([None, 0, 16, 32, 64]))
    if draw(st.booleans()):
        kw["element_strides"] = draw(st.lists(st.integers(0, 9), min_size=rank - 1, max_size=rank + 1))
    if draw(st.booleans()):
        kw["l2_promotion"] = draw(st.sampled_from([None, 0, 64, 128, 256, 512]))
    if draw(st.booleans()):
        kw["oob_fill"] = draw(st.sampled_from([None, "zero", "nan", "none", 1]))
    ptr = draw(st.sampled_from([0x10000, 0x10010, 0x10020, 0x10008, 0x7FFF_0000_0000]))
    return ptr, dtype, shape, strides, kw


@settings(max_examples=1500, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(geometries())
def test_tensor_map_validation_never_crashes_and_names_the_rule(geometry):
    ptr, dtype, shape, strides, kw = geometry
    try:
        plan = TensorMap.tiled_from_pointer(ptr, dtype, shape, strides, validate_only=True, **kw)
    except (ValueError, TypeError) as e:
        assert str(e) and "incompatible function arguments" not in str(e)
        return
    # Accepted: the documented rules hold (the driver half checks the encode itself).
    assert isinstance(plan, dict)
    assert 1 <= len(shape) <= 5 and ptr % 16 == 0
    assert all(1 <= b <= 256 for b in kw["box"])


@settings(max_examples=300, deadline=None, database=None)
@given(geometries())
def test_tensor_map_validation_is_deterministic(geometry):
    """The argument memo (last call's objects) never changes a validation result."""
    ptr, dtype, shape, strides, kw = geometry
    shape, kw = tuple(shape), {k: (tuple(v) if isinstance(v, list) else v) for k, v in kw.items()}
    strides = tuple(strides) if strides is not None else None

    def attempt():
        try:
            return TensorMap.tiled_from_pointer(ptr, dtype, shape, strides, validate_only=True, **kw)
        except (ValueError, TypeError) as e:
            return type(e), str(e)

    first = attempt()
    assert attempt() == first
    assert attempt() == first
