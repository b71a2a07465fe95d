"""nanocuda.texture without a GPU: options and their checks in-process (no driver needed), and the
objects' lifecycle, checks and keep-alive chain against tools/mock_libcuda.c (in a child process,
so the mock is the only driver it sees). The sampling itself: test_texture_gpu.py."""

import textwrap

import pytest

import mock_run

import nanocuda
from nanocuda.texture import (
    MipmappedArray,
    OpaqueArray,
    ResourceDescriptor,
    SurfaceObject,
    TextureObject,
    TextureObjectOptions,
)
from nanocuda.texture._texture import _normalize_address_modes
from nanocuda.typing import AddressModeType, FilterModeType, ReadModeType


def run_on_mock(mock_libcuda, code):
    prelude = textwrap.dedent("""
        import array, gc
        import nanocuda
        from nanocuda import Device
        from nanocuda.texture import *
        from nanocuda.typing import ArrayFormatType, AddressModeType

        d = Device(0)
        s = d.create_stream()
    """)
    mock_run.run_on_mock(mock_libcuda, textwrap.dedent(code) + "\nprint('ok')\n", prelude=prelude)


@pytest.mark.parametrize("cls", [OpaqueArray, MipmappedArray, TextureObject, SurfaceObject, ResourceDescriptor])
def test_made_only_by_their_factories(cls):
    with pytest.raises(RuntimeError, match=f"^{cls.__name__} cannot be instantiated"):
        cls()


def test_address_modes_expand_to_three_axes():
    W, C, M = AddressModeType.WRAP, AddressModeType.CLAMP, AddressModeType.MIRROR
    assert _normalize_address_modes(W) == (W, W, W)
    assert _normalize_address_modes("mirror") == (M, M, M)
    assert _normalize_address_modes((W, "clamp")) == (W, C, C)
    assert _normalize_address_modes([W, C, M]) == (W, C, M)
    with pytest.raises(ValueError, match="1-3 entries"):
        _normalize_address_modes(())
    with pytest.raises(ValueError, match="1-3 entries"):
        _normalize_address_modes((W,) * 4)
    with pytest.raises(ValueError, match=r"address_mode\[1\] must be an AddressModeType"):
        _normalize_address_modes((W, "sideways"))
    with pytest.raises(TypeError, match="address_mode must be"):
        _normalize_address_modes(3)


def test_texture_options_resolve_enum_names_at_construction():
    o = TextureObjectOptions(filter_mode="linear", read_mode="normalized_float", mipmap_filter_mode="linear")
    assert o.filter_mode is FilterModeType.LINEAR and o.read_mode is ReadModeType.NORMALIZED_FLOAT
    assert o.mipmap_filter_mode is FilterModeType.LINEAR
    for field, enum in [("filter_mode", "FilterModeType"), ("read_mode", "ReadModeType"),
                        ("mipmap_filter_mode", "FilterModeType")]:
        with pytest.raises(ValueError, match=f"{field} must be a {enum}"):
            TextureObjectOptions(**{field: 0})
        with pytest.raises(ValueError, match=f"{field} must be a {enum}"):
            TextureObjectOptions(**{field: "bogus"})


def test_from_linear_and_pitch2d_want_a_buffer():
    with pytest.raises(TypeError, match="buffer must be a Buffer"):
        ResourceDescriptor.from_linear(object(), format="uint8", num_channels=1)
    with pytest.raises(TypeError, match="buffer must be a Buffer"):
        ResourceDescriptor.from_pitch2d(bytearray(64), format="uint8", num_channels=1, width=8, height=8,
                                        pitch_bytes=8)
    with pytest.raises(TypeError, match="must be an OpaqueArray"):
        ResourceDescriptor.from_opaque_array(object())
    with pytest.raises(TypeError, match="must be a MipmappedArray"):
        ResourceDescriptor.from_mipmapped_array(object())


def test_public_names():
    assert sorted(nanocuda.texture.__all__) == [
        "MipmappedArray", "MipmappedArrayOptions", "OpaqueArray", "OpaqueArrayOptions", "ResourceDescriptor",
        "SurfaceObject", "TextureObject", "TextureObjectOptions"]
    for name in ("create_opaque_array", "create_mipmapped_array", "create_texture_object", "create_surface_object"):
        assert getattr(nanocuda.Device, name).__doc__


def test_arrays_on_the_mock(mock_libcuda):
    run_on_mock(mock_libcuda, """
        import numpy as np
        a = d.create_opaque_array(OpaqueArrayOptions(shape=(32, 16), format=ArrayFormatType.FLOAT32, num_channels=2))
        assert a.handle != 0 and a.shape == (32, 16) and a.format is ArrayFormatType.FLOAT32
        assert (a.num_channels, a.element_bytes, a.size_bytes) == (2, 8, 32 * 16 * 8)
        assert a.is_surface_load_store is False and a.device is d and "float32x2" in repr(a)
        for fmt, want in [(np.float16, "float16"), (np.dtype("i2"), "int16"), ("uint8", "uint8"),
                          (ArrayFormatType.INT8, "int8")]:
            assert d.create_opaque_array({"shape": (4,), "format": fmt, "num_channels": 1}).format == want
        def make(**kw):
            opts = dict(shape=(8,), format="uint8", num_channels=1); opts.update(kw)
            return lambda: d.create_opaque_array(OpaqueArrayOptions(**opts))
        raises(make(format=np.float64), ValueError, "Device.create_opaque_array", "no ArrayFormatType equivalent")
        raises(make(format=0), ValueError, "format must be an ArrayFormatType")
        raises(make(format="float128"), ValueError, "'float128' has no ArrayFormatType")
        raises(make(num_channels=3), ValueError, "num_channels must be 1, 2 or 4")
        raises(make(shape=(2, 2, 2, 2)), ValueError, "shape rank must be 1, 2 or 3")
        raises(make(shape=()), ValueError, "shape rank")
        raises(make(shape=8), TypeError, "shape must be a tuple")
        raises(make(shape=(8, 0)), ValueError, "shape[1] must be >= 1, got 0")
        raises(make(shape=(8, -2)), ValueError, "shape[1] must be >= 1, got -2")
        raises(make(shape=(8, 2.5)), TypeError, "shape[1] is float")
        raises(make(num_channels="4"), TypeError, "num_channels must be an int")
        raises(lambda: d.create_opaque_array({"shape": (8,), "colour": 1}), TypeError, "create_opaque_array", "colour")
        raises(lambda: d.create_opaque_array("nope"), TypeError, "OpaqueArrayOptions")

        # whole-array copies: the other side must hold the array's bytes
        u = d.create_opaque_array(OpaqueArrayOptions(shape=(16,), format="uint32", num_channels=1))
        host = array.array("I", range(16))
        u.copy_from(host, stream=s)
        assert u.copy_to(host, stream=s) is host
        small = array.array("I", [0] * 8)
        raises(lambda: u.copy_from(small, stream=s), ValueError, "smaller than the array extent")
        raises(lambda: u.copy_to(small, stream=s), ValueError, "smaller than the array extent")
        raises(lambda: u.copy_to(b"x" * 64, stream=s), TypeError, "writable")
        raises(lambda: u.copy_from(host, stream="s"), TypeError, "Stream or GraphBuilder expected")
        buf = d.memory_resource.allocate(32, stream=s)
        raises(lambda: u.copy_from(buf, stream=s), ValueError, "smaller than the array extent")
        big = d.memory_resource.allocate(64, stream=s)
        u.copy_from(big, stream=s); u.copy_to(big, stream=s)
        gb = d.create_graph_builder().begin_building()
        u.copy_from(big, stream=gb)
        u.close(); u.close()
        assert u.handle == 0 and u.is_closed
        raises(lambda: u.copy_from(host, stream=s), ValueError, "closed")

        m = d.create_mipmapped_array(MipmappedArrayOptions(shape=(64, 32), format="uint8", num_channels=4, num_levels=4))
        assert (m.shape, m.num_levels, m.num_channels, m.handle != 0) == ((64, 32), 4, 4, True)
        assert [m.get_level(i).shape for i in range(4)] == [(64, 32), (32, 16), (16, 8), (8, 4)]
        raises(lambda: m.get_level(4), ValueError, "num_levels=4")
        raises(lambda: m.get_level(-1), ValueError, ">= 0")
        raises(lambda: m.get_level(1.0), TypeError, "level must be an int")
        level = m.get_level(1)
        del m; gc.collect()
        assert level.handle != 0  # the level keeps the mipmapped array alive
        raises(lambda: d.create_mipmapped_array(MipmappedArrayOptions(shape=(8, 8), format="uint8", num_channels=1,
                                                                      num_levels=0)), ValueError, "num_levels")
        raises(lambda: d.create_mipmapped_array(MipmappedArrayOptions(shape=(0, 8), format="uint8", num_channels=1,
                                                                      num_levels=1)), ValueError, "shape[0] must be >= 1")
    """)


def test_textures_and_surfaces_on_the_mock(mock_libcuda):
    run_on_mock(mock_libcuda, """
        a = d.create_opaque_array(OpaqueArrayOptions(shape=(8, 8), format="float32", num_channels=1))
        res = ResourceDescriptor.from_opaque_array(a)
        assert res.kind == "array" and res.source is a and res.format == "float32"
        opts = TextureObjectOptions(address_mode=("wrap", "border"), border_color=(1, 0, 0, 1))
        t = d.create_texture_object(resource=res, options=opts)
        assert t.handle != 0 and t.resource is res and t.options is opts and t.device is d
        assert d.create_texture_object(res, {"filter_mode": "linear"}).options.filter_mode == "linear"
        assert d.create_texture_object(res).options == TextureObjectOptions()
        # the texture keeps the descriptor, which keeps the array (gc sees both links)
        ids = id(a), id(res)
        del a, res; gc.collect()
        (r,) = [x for x in gc.get_referents(t) if id(x) == ids[1]]
        assert [x for x in gc.get_referents(r) if id(x) == ids[0]]
        t.close(); t.close()
        assert t.handle == 0 and t.is_closed

        a = d.create_opaque_array(OpaqueArrayOptions(shape=(8, 8), format="float32", num_channels=1))
        res = ResourceDescriptor.from_opaque_array(a)
        def tex(**kw):
            return lambda: d.create_texture_object(resource=res, options=TextureObjectOptions(**kw))
        raises(tex(max_anisotropy=-1), ValueError, "max_anisotropy must be in 0..16")
        raises(tex(max_anisotropy=17), ValueError, "max_anisotropy")
        raises(tex(border_color=(0.0, 0.0)), ValueError, "border_color must have 4")
        raises(tex(address_mode=42), TypeError, "Device.create_texture_object", "address_mode")
        raises(tex(address_mode=()), ValueError, "address_mode tuple must have 1-3")
        raises(tex(address_mode=("wrap", "bad")), ValueError, "address_mode[1]")
        raises(tex(mipmap_level_bias=float("nan")), ValueError, "finite")
        raises(tex(mipmap_level_bias="x"), TypeError, "mipmap_level_bias must be a number")
        raises(tex(border_color=5), TypeError, "border_color must be a tuple")
        raises(tex(border_color=(0, 0, "x", 0)), TypeError, "border_color[2]")
        raises(tex(max_anisotropy=2.0), TypeError, "max_anisotropy must be an int")
        raises(lambda: d.create_texture_object(resource=object()), TypeError, "resource must be a ResourceDescriptor")
        raises(lambda: d.create_texture_object(resource=res, options="nope"), TypeError,
               "must be provided as an object of type TextureObjectOptions")
        raises(lambda: d.create_texture_object(resource=res, options={"filter": 1}), TypeError, "filter")
        a.close()  # drops the Python object's reference; the descriptor still holds the storage
        assert a.handle == 0 and d.create_texture_object(resource=res).handle != 0

        # linear and pitch2d memory: sizes checked against the Buffer
        buf = d.memory_resource.allocate(1024, stream=s)
        lin = ResourceDescriptor.from_linear(buf, format="uint32", num_channels=1)
        assert (lin.kind, lin.source, lin.size_bytes) == ("linear", buf, 1024) and "linear" in repr(lin)
        assert ResourceDescriptor.from_linear(buf, format="uint32", num_channels=1, size_bytes=512)._size_bytes == 512
        assert d.create_texture_object(resource=lin).handle != 0
        def linear(**kw):
            return lambda: ResourceDescriptor.from_linear(buf, **kw)
        raises(linear(format="uint8", num_channels=1, size_bytes=2048), ValueError, "exceeds buffer.size")
        raises(linear(format="uint8", num_channels=3), ValueError, "num_channels")
        raises(linear(format="uint32", num_channels=1, size_bytes=0), ValueError, "at least one element")
        raises(linear(format="uint32", num_channels=1, size_bytes=10), ValueError, "multiple of element size")
        raises(linear(format=0, num_channels=1), ValueError, "format must be an ArrayFormatType")
        p2 = ResourceDescriptor.from_pitch2d(buf, format="uint8", num_channels=4, width=8, height=8, pitch_bytes=64)
        assert (p2.kind, p2.width, p2.height, p2.pitch_bytes) == ("pitch2d", 8, 8, 64) and "pitch2d" in repr(p2)
        def pitch(**kw):
            args = dict(format="uint32", num_channels=1, width=16, height=8, pitch_bytes=64); args.update(kw)
            return lambda: ResourceDescriptor.from_pitch2d(buf, **args)
        raises(pitch(pitch_bytes=32), ValueError, "pitch_bytes 32 is less than a row")
        raises(pitch(height=64), ValueError, "exceeds buffer.size")
        raises(pitch(width=0), ValueError, "width must be >= 1")
        raises(pitch(height=0), ValueError, "height must be >= 1")
        raises(pitch(num_channels=3), ValueError, "num_channels")
        raises(pitch(width=2.0), TypeError, "width must be an int")
        raises(linear(format="uint8", num_channels=1, size_bytes="8"), TypeError, "size_bytes must be an int")

        # surfaces: only arrays made with is_surface_load_store
        sa = d.create_opaque_array(OpaqueArrayOptions(shape=(8, 8), format="uint8", num_channels=4,
                                                      is_surface_load_store=True))
        surf = d.create_surface_object(resource=ResourceDescriptor.from_opaque_array(sa))
        assert surf.handle != 0 and surf.resource.source is sa
        surf.close(); surf.close()
        assert surf.handle == 0
        plain = d.create_opaque_array(OpaqueArrayOptions(shape=(8, 8), format="uint8", num_channels=4))
        raises(lambda: d.create_surface_object(resource=ResourceDescriptor.from_opaque_array(plain)), ValueError,
               "is_surface_load_store=True")
        for r in (lin, p2):
            raises(lambda: d.create_surface_object(resource=r), ValueError, "array-backed")
        m = d.create_mipmapped_array(MipmappedArrayOptions(shape=(16, 16), format="uint8", num_channels=4,
                                                           num_levels=2, is_surface_load_store=True))
        mres = ResourceDescriptor.from_mipmapped_array(m)
        assert mres.kind == "mipmapped_array" and mres.source is m
        raises(lambda: d.create_surface_object(resource=mres), ValueError, "array-backed")
        assert d.create_texture_object(resource=mres).handle != 0
    """)
