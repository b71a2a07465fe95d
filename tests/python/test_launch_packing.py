"""Launch argument packing against hand-built parameter layouts (no GPU needed)."""

import ctypes
import struct

import numpy as np
import pytest

from testing_hooks import pack


# (const void*, int, float, double, char, short, struct{int a, b, c;})
MIXED = [(0, 8), (8, 4), (12, 4), (16, 8), (24, 1), (26, 2), (28, 12)]


def test_every_kind_lands_at_its_offset():
    s = struct.pack("<iii", 1, 2, 3)
    out = pack(MIXED, "mixed", 0xDEAD_BEEF_00, -5, 1.5, 2.25, True, np.int16(-300), s)
    assert struct.unpack_from("<Q", out, 0)[0] == 0xDEAD_BEEF_00
    assert struct.unpack_from("<i", out, 8)[0] == -5
    assert struct.unpack_from("<f", out, 12)[0] == 1.5
    assert struct.unpack_from("<d", out, 16)[0] == 2.25
    assert out[24] == 1
    assert struct.unpack_from("<h", out, 26)[0] == -300
    assert struct.unpack_from("<iii", out, 28) == (1, 2, 3)


def test_int_written_at_parameter_size():
    out = pack([(0, 4), (8, 8), (16, 2), (18, 1)], "k", 0xFFFFFFFF, 2**64 - 1, -1, 255)
    assert struct.unpack_from("<I", out, 0)[0] == 0xFFFFFFFF
    assert struct.unpack_from("<Q", out, 8)[0] == 2**64 - 1
    assert struct.unpack_from("<h", out, 16)[0] == -1
    assert out[18] == 255


def test_float_is_float32_or_float64_by_size():
    out = pack([(0, 4), (8, 8)], "k", 0.1, 0.1)
    assert struct.unpack_from("<f", out, 0)[0] == np.float32(0.1)
    assert struct.unpack_from("<d", out, 8)[0] == 0.1


def test_numpy_and_ctypes_scalars_keep_exact_bytes():
    out = pack([(0, 4), (4, 4), (8, 8), (16, 2)], "k", np.float32(3.5), ctypes.c_int(-7),
               ctypes.c_double(1.25), np.float16(2.0))
    assert struct.unpack_from("<f", out, 0)[0] == 3.5
    assert struct.unpack_from("<i", out, 4)[0] == -7
    assert struct.unpack_from("<d", out, 8)[0] == 1.25
    assert np.frombuffer(out[16:18], dtype=np.float16)[0] == 2.0


def test_numpy_structured_scalar_is_a_struct_by_value():
    dt = np.dtype([("a", "<i4"), ("b", "<f4"), ("c", "<i4")])
    rec = np.array([(7, 1.5, -2)], dtype=dt)[0]
    out = pack([(0, 12)], "k", rec)
    assert struct.unpack_from("<ifi", out, 0) == (7, 1.5, -2)


def test_wrong_count_names_the_kernel():
    with pytest.raises(TypeError, match="kernel 'saxpy' takes 5 arguments, got 2"):
        pack([(0, 4), (8, 8), (16, 8), (24, 8), (32, 8)], "saxpy", 1.0, 2)


@pytest.mark.parametrize(
    "layout,arg,message",
    [
        ([(0, 4)], np.float64(1.0), r"parameter 0: expects 4 bytes, got 8 bytes \(numpy.float64\)"),
        ([(0, 4)], 2**40, "int 1099511627776 does not fit in 4 bytes"),
        ([(0, 1)], 256, "does not fit in 1 bytes"),
        ([(0, 8)], 2**64, "does not fit in 64 bits"),
        ([(0, 4)], True, r"expects 4 bytes, got 1 bytes \(bool\)"),
        ([(0, 2)], 1.0, r"expects 2 bytes, got 8 bytes \(float\)"),
        ([(0, 12)], b"12345678", r"expects 12 bytes, got 8 bytes \(bytes\)"),
        ([(0, 8)], np.zeros(2, dtype=np.float32), "host memory|the CPU"),
        ([(0, 8)], ctypes.c_int(1), r"expects 8 bytes, got 4 bytes \(c_int\)"),
    ],
)
def test_mismatches_name_kernel_parameter_and_sizes(layout, arg, message):
    with pytest.raises((TypeError, ValueError), match=message) as info:
        pack(layout, "kern", arg)
    assert "kernel 'kern'" in str(info.value)


def test_unsupported_object_is_a_type_error():
    with pytest.raises(TypeError, match=r"kernel 'kern', parameter 0: cannot pass a object"):
        pack([(0, 8)], "kern", object())


def test_cpu_array_is_never_passed_as_a_pointer():
    with pytest.raises(ValueError, match="host memory|the CPU"):
        pack([(0, 8)], "kern", np.zeros(4, dtype=np.uint8))


def test_type_cache_follows_type_changes():
    layout = [(0, 8)]
    assert struct.unpack("<Q", pack(layout, "k", 5))[0] == 5
    assert struct.unpack("<d", pack(layout, "k", 5.0))[0] == 5.0
    assert struct.unpack("<Q", pack(layout, "k", 6))[0] == 6


def test_launch_config_validation():
    import nanocuda

    c = nanocuda.LaunchConfig(grid=(4, 2), block=128, shared_mem=1024)
    assert c.grid == (4, 2, 1) and c.block == (128, 1, 1) and c.shared_mem == 1024
    assert c.cluster is None
    with pytest.raises(ValueError, match="at most 1024 threads"):
        nanocuda.LaunchConfig(grid=1, block=(32, 33))
    # cuda.core's rule: with a cluster, grid counts clusters (3 clusters of 2 = 6 blocks)
    clustered = nanocuda.LaunchConfig(grid=3, block=32, cluster=2)
    assert clustered.grid == (3, 1, 1) and clustered.cluster == (2, 1, 1)
    assert "cluster=(2, 1, 1)" in repr(clustered)
    with pytest.raises(ValueError, match=r"grid y and z are at most 65535 blocks \(grid × cluster\), got \(1, 80000, 1\)"):
        nanocuda.LaunchConfig(grid=(1, 40000), block=32, cluster=(1, 2))


@pytest.mark.parametrize(
    "value",
    [0, 1, -1, 2**30 - 1, 2**30, -(2**30), 2**59, -(2**59), 2**60, 2**63 - 1, -(2**63), 2**64 - 1],
)
def test_int_fast_path_boundaries(value):
    # Values of up to two CPython digits take a fast path; the rest the generic conversion.
    out = pack([(0, 8)], "k", value)
    assert struct.unpack("<Q", out)[0] == value % 2**64
