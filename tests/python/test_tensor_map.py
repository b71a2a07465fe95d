"""TensorMap without a GPU: validation rules, error text, and geometry inference from
CUDA-array-interface and DLPack objects (validate_only=True never calls the driver)."""

import numpy as np
import pytest

import nanocuda
from nanocuda import TensorMap

ADDR = 0x7F0000000000  # fake, 16-byte aligned device address


class CAI:
    """A CPU-built object exposing __cuda_array_interface__ (no memory behind it)."""

    def __init__(self, shape, typestr, ptr=ADDR, strides=None):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (ptr, False),
            "version": 3, "strides": strides,
        }


def plan(**kw):
    args = dict(ptr=0x10000, dtype="float16", shape=(512, 512), box=(64, 64))
    args.update(kw)
    return TensorMap.tiled_from_pointer(args.pop("ptr"), args.pop("dtype"), args.pop("shape"),
                                        args.pop("strides_bytes", None), validate_only=True, **args)


def test_benchmark_geometry_defaults():
    g = plan()
    assert g["shape"] == (512, 512) and g["strides"] == (1024, 2) and g["box"] == (64, 64)
    assert g["swizzle"] == "128B"  # auto: a 128-byte inner row
    assert g["l2_promotion"] == "128B" and g["oob_fill"] == "zero" and g["interleave"] == "none"
    assert g["element_strides"] == (1, 1)


@pytest.mark.parametrize("swizzle,expected", [(None, "128B"), ("auto", "128B"), (0, "none"),
                                               ("none", "none"), (128, "128B"), ("128B", "128B"),
                                               ("128b", "128B"), ("128B_atom_32B", "128B_atom_32B")])
def test_swizzle_spellings(swizzle, expected):
    assert plan(swizzle=swizzle)["swizzle"] == expected


@pytest.mark.parametrize("box,swizzle,expected", [((8, 16), None, "32B"), ((8, 32), None, "64B"),
                                                   ((8, 128), None, "none"), ((8, 8), None, "none")])
def test_auto_swizzle(box, swizzle, expected):
    assert plan(box=box, swizzle=swizzle)["swizzle"] == expected


def test_option_spellings():
    g = plan(l2_promotion=256, oob_fill="nan", element_strides=(2, 1))
    assert g["l2_promotion"] == "256B" and g["oob_fill"] == "nan" and g["element_strides"] == (2, 1)
    assert plan(l2_promotion="none")["l2_promotion"] == "none"


@pytest.mark.parametrize("kw,exc,text", [
    (dict(shape=(), box=()), ValueError, "rank must be 1..5, got 0"),
    (dict(shape=(2,) * 6, box=(1,) * 6), ValueError, "rank must be 1..5, got 6"),
    (dict(ptr=0x10008), ValueError, "global address must be 16-byte aligned, got 0x10008"),
    (dict(shape=(0, 512)), ValueError, "shape[0] = 0: every dimension must be 1..2^32 elements"),
    (dict(strides_bytes=(1000, 2)), ValueError, "strides[0] = 1000 bytes: global strides must be multiples of 16 bytes"),
    (dict(strides_bytes=(1024, 4)), ValueError, "the innermost dimension must be contiguous"),
    (dict(strides_bytes=(1 << 40, 2)), ValueError, "global strides must be < 2^40 bytes"),
    (dict(shape=(4, 100), box=(4, 64)), ValueError, "strides[0] = 200 bytes"),
    (dict(box=(64, 300)), ValueError, "box[1] = 300: box sizes must be 1..256 elements"),
    (dict(box=(0, 64)), ValueError, "box[0] = 0"),
    (dict(box=(64,)), ValueError, "box has 1 entries, but the tensor has rank 2"),
    (dict(box=(64, -1)), ValueError, "box[1] = -1 must not be negative"),
    (dict(shape=(4, 64, 64), box=(2, 8, 12), interleave="16B", swizzle="none"), ValueError,
     "the inner box row is 24 bytes (box[-1] = 12 x float16): it must be a multiple of 16 bytes"),
    (dict(dtype="float32", shape=(2048, 2048), box=(256, 256), swizzle="none"), ValueError,
     "the box is 262144 bytes (the box shape divided by element_strides): a TMA box must fit in 228 KiB"),
    (dict(box=(64, 12), swizzle="none"), ValueError, "the inner box row is 24 bytes (box[-1] = 12 x float16): it must be a multiple of 16 bytes"),
    (dict(box=(64, 128), swizzle=128), ValueError, "the inner box row is 256 bytes (box[-1] = 128 x float16): it must fit the 128B swizzle span of 128 bytes"),
    (dict(box=(64, 64), swizzle=64), ValueError, "it must fit the 64B swizzle span of 64 bytes"),
    (dict(box=(64, 32), swizzle=32), ValueError, "it must fit the 32B swizzle span of 32 bytes"),
    (dict(element_strides=(9, 1)), ValueError, "element_strides[0] = 9: element strides must be 1..8"),
    (dict(element_strides=(0, 1)), ValueError, "element_strides[0] = 0"),
    (dict(dtype="complex64", box=(64, 16)), TypeError, "unsupported dtype complex64 for TMA"),
    (dict(dtype=42), TypeError, "unsupported TMA dtype 42"),
    (dict(dtype="uint8", box=(64, 128), oob_fill="nan"), ValueError, "oob_fill nan requires a floating-point dtype, got uint8"),
    (dict(swizzle=48), ValueError, "swizzle must be one of"),
    (dict(swizzle=1.5), TypeError, "swizzle must be an int or a str"),
    (dict(interleave="8B"), ValueError, "interleave must be one of"),
    (dict(interleave=16), ValueError, "rank must be >= 3 with 16B interleave, got 2"),
    (dict(oob_fill="inf"), ValueError, "oob_fill must be one of"),
])
def test_rejected(kw, exc, text):
    with pytest.raises(exc) as info:
        plan(**kw)
    assert text in str(info.value)
    assert str(info.value).startswith("TensorMap.tiled: ")


@pytest.mark.parametrize("kw", [
    dict(), dict(ptr=0x10010), dict(box=(256, 64)), dict(shape=(10, 24), box=(64, 64)),
    dict(strides_bytes=(1040, 2)), dict(shape=(1 << 32, 512), strides_bytes=(1024, 2)),
    dict(element_strides=(8, 8)), dict(box=(64, 8), swizzle="none"), dict(box=(64, 16), swizzle=32),
    dict(box=(64, 32), swizzle=64), dict(dtype="bfloat16"), dict(dtype="tfloat32", box=(64, 32)),
    dict(dtype="int8", box=(64, 128)), dict(dtype="float32", box=(64, 32)), dict(oob_fill="nan"),
    dict(shape=(8,), box=(64,)), dict(shape=(2, 3, 4, 5, 64), box=(1, 2, 3, 4, 64)),
])
def test_accepted(kw):
    assert plan(**kw)["kind"] == "tiled"


def test_interleave_32b():
    kw = dict(shape=(4, 64, 16), box=(1, 8, 16), interleave=32)
    assert plan(ptr=0x10020, **kw)["swizzle"] == "32B"
    with pytest.raises(ValueError, match="32-byte aligned with 32B interleave, got 0x10010"):
        plan(ptr=0x10010, **kw)
    with pytest.raises(ValueError, match="32B interleave requires swizzle 32B, got 128B"):
        plan(ptr=0x10020, swizzle=128, **kw)


def test_cai_inference():
    g = TensorMap.tiled(CAI((3, 128, 256), "<f4"), (1, 32, 32), validate_only=True)
    assert g["dtype"] == "float32" and g["shape"] == (3, 128, 256)
    assert g["strides"] == (131072, 1024, 4) and g["address"] == ADDR
    # A padded-row view: strides in bytes from the interface.
    g = TensorMap.tiled(CAI((64, 100), "<f2", strides=(256, 2)), (64, 64), validate_only=True)
    assert g["strides"] == (256, 2) and g["swizzle"] == "128B"
    g = TensorMap.tiled(CAI((16, 64), "|i1"), (16, 64), validate_only=True)
    assert g["dtype"] == "uint8" and g["swizzle"] == "64B"


def test_cai_size_one_dims_get_harmless_strides():
    g = TensorMap.tiled(CAI((1, 5, 8), "<f2"), (1, 5, 8), validate_only=True)
    assert g["strides"][0] % 16 == 0


def test_cai_rejections():
    with pytest.raises(ValueError, match="the innermost dimension must be contiguous"):
        TensorMap.tiled(CAI((64, 64), "<f2", strides=(2, 128)), (64, 64), validate_only=True)
    with pytest.raises(ValueError, match="global address must be 16-byte aligned"):
        TensorMap.tiled(CAI((64, 64), "<f2", ptr=ADDR + 8), (64, 64), validate_only=True)
    with pytest.raises(ValueError, match="rank must be 1..5, got 6"):
        TensorMap.tiled(CAI((2,) * 6, "<f4"), (1,) * 6, validate_only=True)
    with pytest.raises(TypeError, match="unsupported dtype complex64"):
        TensorMap.tiled(CAI((64, 64), "<c8"), (64, 64), validate_only=True)
    with pytest.raises(TypeError, match="expected an array"):
        TensorMap.tiled(object(), (64, 64), validate_only=True)


def test_cpu_dlpack_is_rejected():
    a = np.zeros((64, 64), np.float16)  # numpy exposes __dlpack__ on the CPU
    with pytest.raises(ValueError, match="must be on a CUDA device, but the numpy.ndarray lives on the CPU"):
        TensorMap.tiled(a, (64, 64), validate_only=True)


def test_im2col_inference_and_rules():
    x = CAI((2, 16, 16, 64), "<f2")
    g = TensorMap.im2col(x, pixels_per_column=64, lower_corner=(-1, -1), upper_corner=(-1, -1),
                         validate_only=True)
    assert g["kind"] == "im2col" and g["channels_per_pixel"] == 64 and g["swizzle"] == "128B"
    assert g["lower_corner"] == (-1, -1) and g["strides"] == (32768, 2048, 128, 2)
    with pytest.raises(ValueError, match="rank must be 3..5"):
        TensorMap.im2col(CAI((16, 64), "<f2"), pixels_per_column=8, validate_only=True)
    with pytest.raises(ValueError, match="pixels_per_column = 2000: must be 1..1024"):
        TensorMap.im2col(x, pixels_per_column=2000, validate_only=True)
    with pytest.raises(ValueError, match=r"lower_corner\[0\] = -129: with rank 4 corner offsets must be in \[-128, 127\]"):
        TensorMap.im2col(x, pixels_per_column=8, lower_corner=(-129, 0), validate_only=True)
    with pytest.raises(ValueError, match="lower_corner has 1 entries"):
        TensorMap.im2col(x, pixels_per_column=8, lower_corner=(0,), validate_only=True)
    with pytest.raises(ValueError, match="channels_per_pixel = 300: must be 1..256"):
        TensorMap.im2col(x, pixels_per_column=8, channels_per_pixel=300, validate_only=True)
    # Rules the driver applies without cuda.h saying so (measured on the H100, driver 13.0).
    with pytest.raises(ValueError, match="channels_per_pixel = 12 x float16 is 24 bytes per pixel: "
                                         "it must be a multiple of 16 bytes"):
        TensorMap.im2col(x, pixels_per_column=8, channels_per_pixel=12, swizzle="none", validate_only=True)
    wide = CAI((2, 16, 16, 256), "<f4")
    with pytest.raises(ValueError, match="the box is 262144 bytes .*: a TMA box must fit in 228 KiB"):
        TensorMap.im2col(wide, pixels_per_column=256, swizzle="none", validate_only=True)
    assert TensorMap.im2col(wide, pixels_per_column=128, swizzle="none", validate_only=True)["pixels_per_column"] == 128
    g = TensorMap.im2col_from_pointer(0x10000, "bfloat16", (1, 4, 8, 8, 32), pixels_per_column=16,
                                      validate_only=True)
    assert g["shape"] == (1, 4, 8, 8, 32) and g["swizzle"] == "64B"


def test_bytes_round_trip_and_repr():
    raw = bytes(range(128))
    tm = TensorMap.from_bytes(raw)
    assert bytes(tm) == raw and tm.to_bytes() == raw
    assert tm == TensorMap.from_bytes(raw) and tm != TensorMap.from_bytes(bytes(128))
    assert tm.kind == "raw" and tm.geometry is None
    assert "TensorMap" in repr(tm)
    with pytest.raises(ValueError, match="a tensor map is 128 bytes, got 3"):
        TensorMap.from_bytes(b"abc")


def test_replace_address_checks_alignment_before_driver():
    tm = TensorMap.from_bytes(bytes(128))
    with pytest.raises(ValueError, match="global address must be 16-byte aligned, got 0x1008"):
        tm.replace_address(0x1008)


def test_encode_reaches_driver_only_after_validation():
    # Valid geometry: the driver is the next step (absent here: DriverNotFoundError).
    try:
        tm = TensorMap.tiled_from_pointer(0x10000, "float16", (512, 512), box=(64, 64))
    except nanocuda.CudaError:
        return
    assert tm.kind == "tiled" and "swizzle=128B" in str(tm) and tm.address == 0x10000


def test_repeated_argument_objects_are_reread_when_they_can_change():
    # tiled_from_pointer remembers the argument objects of its last call; only deeply
    # immutable ones (tuples of ints, str, int, None) may skip parsing, so a list edited in
    # place between calls must be read again.
    shape = [512, 512]
    g = TensorMap.tiled_from_pointer(0x10000, "float16", shape, box=(64, 64), validate_only=True)
    assert g["shape"] == (512, 512)
    shape[0] = 256
    g = TensorMap.tiled_from_pointer(0x10000, "float16", shape, box=(64, 64), validate_only=True)
    assert g["shape"] == (256, 512)
    box = [64, 64]
    x = CAI((128, 128), "<f2")
    assert TensorMap.tiled(x, box, validate_only=True)["box"] == (64, 64)
    box[1] = 32
    assert TensorMap.tiled(x, box, validate_only=True)["box"] == (64, 32)


def test_repeated_tuples_still_validate_every_call():
    shape, box = (512, 512), (64, 64)
    for ptr in (0x10000, 0x20000):
        g = TensorMap.tiled_from_pointer(ptr, "float16", shape, box=box, validate_only=True)
        assert g["address"] == ptr and g["shape"] == (512, 512)
    with pytest.raises(ValueError, match="16-byte aligned"):
        TensorMap.tiled_from_pointer(0x10008, "float16", shape, box=box, validate_only=True)
    # The same box object against a tensor of another rank is read again (and refused).
    x3 = CAI((4, 128, 128), "<f2")
    with pytest.raises(ValueError, match="box has 2 entries"):
        TensorMap.tiled(x3, box, validate_only=True)
    assert TensorMap.tiled(CAI((128, 128), "<f2"), box, validate_only=True)["box"] == (64, 64)


def test_bool_is_rejected_with_a_uint8_hint():
    # Decision (docs/DESIGN.md): bool is not a TMA type; stores could write bytes other than
    # 0/1 into a bool tensor. Every way of naming it gets the same error.
    for make in (lambda: plan(dtype="bool"),
                 lambda: plan(dtype=np.bool_),
                 lambda: TensorMap.tiled(CAI((64, 64), "|b1"), (64, 64), validate_only=True)):
        with pytest.raises(TypeError, match=r"TensorMap\.tiled.*dtype bool is not supported for TMA.*uint8"):
            make()
    g = TensorMap.tiled(CAI((64, 64), "|u1"), (64, 64), validate_only=True)  # the suggested view
    assert g["dtype"] == "uint8"
