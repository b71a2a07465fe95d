"""StridedMemoryView as cuda.core 1.2 has it, on the CPU: the core's dtype table and contiguity
rule, DLPack export and re-import, view(), cuda.core's errors; from_buffer on the mock driver."""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import nanocuda
from nanocuda.utils import StridedMemoryView

_internal = nanocuda._nanocuda._internal


def view(a):
    return StridedMemoryView.from_any_interface(a, stream_ptr=-1)


class CAI:
    """A synthetic __cuda_array_interface__ object (address 0: no driver is asked)."""

    def __init__(self, shape, typestr="<f4", strides=None, version=3, **extra):
        self.__cuda_array_interface__ = dict(shape=shape, typestr=typestr, strides=strides,
                                             data=(0, False), version=version, **extra)


def test_one_contiguity_rule_torch_s():
    # size-0 and size-1 dimensions impose nothing; the empty C-order (2, 0) array is contiguous
    assert _internal.is_contiguous([2, 0], [1, 1]) and _internal.is_contiguous([2, 0], [0, 1])
    assert _internal.is_contiguous([3, 1], [1, 7]) and _internal.is_contiguous([4], None)
    assert not _internal.is_contiguous([2, 3], [1, 2])
    assert view(np.empty((2, 0), np.float32))._contiguous
    assert not view(np.zeros((4, 6), np.int8)[:, ::2])._contiguous


def test_one_dtype_table():
    table = {name: (code, bits, lanes) for name, code, bits, lanes, _ in _internal.dtype_table()}
    assert table["float32"] == (2, 32, 1) and table["bfloat16"] == (4, 16, 1) and table["bool"] == (6, 8, 1)
    assert {"complex128", "float8_e4m3fn", "uint64"} <= set(table)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float64,
                                   np.complex64, np.complex128])
def test_dlpack_export_round_trips(dtype):
    src = (np.arange(24) % 2).astype(dtype).reshape(4, 6)[:, ::2]
    v = view(src)
    assert v.strides == (6, 2) and v.dtype == np.dtype(dtype)
    out = np.from_dlpack(v)
    assert out.dtype == src.dtype and out.shape == src.shape and np.array_equal(out, src)
    assert out.ctypes.data == src.ctypes.data  # shared, not copied
    assert v.__dlpack_device__() == (1, 0)


def test_dlpack_capsules_and_special_shapes():
    v = view(np.arange(6, dtype=np.int32))
    assert "dltensor" in repr(v.__dlpack__()) and "versioned" not in repr(v.__dlpack__())
    assert "dltensor_versioned" in repr(v.__dlpack__(max_version=(1, 0)))
    for shape in [(), (0, 3)]:
        src = np.zeros(shape, np.complex128)
        assert np.from_dlpack(view(src)).shape == shape
    with pytest.raises(BufferError, match="copy=True is not supported"):
        v.__dlpack__(copy=True)
    with pytest.raises(TypeError, match="max_version must be a"):
        v.__dlpack__(max_version="1.0")


def test_dlpack_export_refuses_what_dlpack_cannot_carry():
    v = view(np.zeros(3, np.float64))
    with pytest.raises(BufferError, match="Structured dtypes"):
        v.view(dtype=np.dtype([("x", np.float32), ("y", np.int32)])).__dlpack__()
    with pytest.raises(BufferError, match="Non-native-endian"):
        v.view(dtype=np.dtype(np.int64).newbyteorder("S")).__dlpack__()
    with pytest.raises(BufferError, match="Unsupported dtype for DLPack export: void64"):
        v.view(dtype=np.dtype("V8")).__dlpack__()


def test_view_reinterprets_and_relayouts():
    v = view(np.arange(4, dtype=np.float32))
    assert v.view() is v and v.view(layout=None, dtype=None) is v
    w = v.view(dtype=np.int32)
    assert w.dtype == np.int32 and w.shape == v.shape and w.strides == v.strides and w.ptr == v.ptr
    with pytest.raises(ValueError, match="itemsize 8"):
        v.view(dtype=np.float64)

    class Layout:
        shape, strides, itemsize, slice_offset_in_bytes = (2,), (2,), 4, 4

    s = v.view(Layout())
    assert s.shape == (2,) and s.strides == (2,) and s.ptr == v.ptr + 4
    np.testing.assert_array_equal(np.from_dlpack(s), [1.0, 3.0])


def test_from_dlpack_rules():
    a = np.arange(4, dtype=np.float32)
    with pytest.raises(BufferError, match="stream=None is ambiguous"):
        StridedMemoryView.from_dlpack(a)

    class Vulkan:
        def __dlpack_device__(self):
            return (7, 0)

        def __dlpack__(self, **kwargs):
            raise AssertionError("not reached")

    with pytest.raises(BufferError, match="device not supported"):
        StridedMemoryView.from_dlpack(Vulkan(), stream_ptr=0)

    class OldProducer:  # refuses max_version: read through the pre-1.0 capsule
        def __init__(self):
            self.seen = []

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, *, stream=None, max_version=None):
            self.seen.append(max_version)
            if max_version is not None:
                raise TypeError("no max_version")
            return view(a).__dlpack__()

    p = OldProducer()
    v = StridedMemoryView.from_dlpack(p, stream_ptr=-1)
    assert p.seen == [(1, 0), None] and v.ptr == a.ctypes.data and v.exporting_obj is p


def test_deprecated_constructor_warns_and_still_views():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    with pytest.deprecated_call(match="deprecated"):
        v = StridedMemoryView(a, stream_ptr=-1)
    assert v.shape == (2, 3) and v.strides == (3, 1)
    with pytest.deprecated_call(match="CUDA-array-interface-supporting object is deprecated"):
        c = StridedMemoryView(CAI((4,)), stream_ptr=-1)
    assert c.is_device_accessible and c.shape == (4,)
    with pytest.deprecated_call(match="deprecated"):
        e = StridedMemoryView()
    assert e.shape == () and e.dtype is None
    with pytest.raises(BufferError, match="does not support any data exchange protocol"):
        StridedMemoryView.from_any_interface(object(), stream_ptr=-1)


def test_cuda_array_interface_rules():
    v = StridedMemoryView.from_cuda_array_interface(CAI((1, 1), strides=(0, 0)), stream_ptr=-1)
    assert v.strides == (0, 0)  # the producer's strides, kept
    s = StridedMemoryView.from_cuda_array_interface(CAI((2,), typestr="|V16"), stream_ptr=-1)
    assert s.dtype == np.dtype("V16") and s.size == 2 and s.is_device_accessible
    with pytest.raises(ValueError, match="strides must be divisible by itemsize"):
        StridedMemoryView.from_cuda_array_interface(CAI((2,), strides=(10,), typestr="<f8"), stream_ptr=-1)
    with pytest.raises(BufferError, match="v3 or above"):
        StridedMemoryView.from_cuda_array_interface(CAI((5,), version=2), stream_ptr=-1)
    with pytest.raises(BufferError, match="mask is not supported"):
        StridedMemoryView.from_cuda_array_interface(CAI((5,), mask=np.ones(5, bool)), stream_ptr=-1)
    with pytest.raises(BufferError, match="stream=None is ambiguous"):
        StridedMemoryView.from_cuda_array_interface(CAI((5,)))


def test_array_interface_rules():
    x = np.array([(1, 2.0), (3, 4.0)], dtype=[("a", "i4"), ("b", "f8")])
    v = StridedMemoryView.from_array_interface(x)
    assert v.dtype == np.dtype("V12") and v.size == 2 and v.exporting_obj is x
    with pytest.raises(ValueError, match="strides must be divisible by itemsize"):
        StridedMemoryView.from_array_interface(x["b"])
    f = StridedMemoryView.from_array_interface(np.zeros((2, 3), np.int32, order="F"))
    assert f.strides == (1, 2) and not f._contiguous
    c = StridedMemoryView.from_array_interface(np.zeros((2, 3), np.int32))
    assert c.strides is None and c._contiguous  # the interface gave none, as cuda.core reports


def test_dtype_needs_ml_dtypes_for_bfloat16():
    pytest.importorskip("ml_dtypes")
    import ml_dtypes

    v = view(np.zeros(3, np.float32)).view(dtype=ml_dtypes.bfloat16, layout=type(
        "L", (), {"shape": (6,), "strides": (1,), "itemsize": 2})())
    assert v.dtype == np.dtype(ml_dtypes.bfloat16)
    # numpy cannot import a bfloat16 DLTensor: read the export back with nanocuda's own reader
    again = StridedMemoryView.from_dlpack(type("Wrap", (), {
        "__dlpack__": lambda self, **kw: v.__dlpack__(**kw),
        "__dlpack_device__": lambda self: v.__dlpack_device__()})(), stream_ptr=-1)
    assert again.dtype == np.dtype(ml_dtypes.bfloat16) and again.shape == (6,) and again.ptr == v.ptr


def test_copies_host_to_host_are_not_implemented():
    v = view(np.zeros(5, np.float32))
    with pytest.raises(NotImplementedError, match="copy_to: host-to-host"):
        v.copy_to(v, stream=None)
    with pytest.raises(NotImplementedError, match="copy_from: host-to-host"):
        v.copy_from(v, stream=None)


def test_as_tensor_map_argument_rules():
    host = view(np.zeros((64, 64), np.float32))
    with pytest.raises(ValueError, match="device-accessible"):
        host.as_tensor_map(box_dim=(32, 32))
    with pytest.raises(TypeError, match="Specify either options or the individual"):
        host.as_tensor_map(box_dim=(64,), options={"box_dim": (64,)})
    with pytest.raises(TypeError, match="unknown option key 'box'"):
        host.as_tensor_map(options={"box": (64,)})
    dev = StridedMemoryView.from_cuda_array_interface(CAI((64, 64)), stream_ptr=-1)
    with pytest.raises(ValueError, match="rank must be between 1 and 5"):
        dev.as_tensor_map(box_dim=())
    with pytest.raises(ValueError, match="box_dim must have 2 elements"):
        dev.as_tensor_map(box_dim=(32,), data_type="float32")
    with pytest.raises(ValueError, match=r"box_dim\[1\] must be in \[1, 256\]"):
        dev.as_tensor_map(box_dim=(32, 512), data_type="float32")
    with pytest.raises(ValueError, match="element_strides must have 2 elements"):
        dev.as_tensor_map(box_dim=(32, 32), element_strides=(1,), data_type="float32")
    with pytest.raises(TypeError, match="data_type must be"):
        dev.as_tensor_map(box_dim=(32, 32), data_type=42)


def test_repr_names_a_missing_dtype():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert "dtype=NoneType" in repr(StridedMemoryView())


def test_from_buffer_on_the_mock_driver(mock_libcuda, tmp_path):
    """from_buffer's rules need a Buffer: allocated from tools/mock_libcuda.c in a child process."""
    code = textwrap.dedent("""
        import numpy as np, nanocuda
        from nanocuda.utils import StridedMemoryView as S
        dev = nanocuda.Device(0); dev.set_current()
        buf = dev.allocate(40, stream=dev.default_stream)
        v = S.from_buffer(buf, (5, 4), dtype=np.int16)
        assert v.strides == (4, 1) and v.dtype == np.int16 and v.exporting_obj is buf
        assert v.__dlpack_device__() == (2, 0) and v.is_device_accessible
        n = S.from_buffer(buf, (40,), itemsize=1)
        assert n.dtype is None and "dtype=NoneType" in repr(n)
        for call, text in [(lambda: n.__dlpack__(), "no dtype"),
                           (lambda: S.from_buffer(buf, (5,)), "itemsize or dtype must be specified"),
                           (lambda: S.from_buffer(buf, (5,), itemsize=1, dtype=np.int16),
                            "itemsize 1 does not match dtype.itemsize 2"),
                           (lambda: S.from_buffer(buf, (5, 8), dtype=np.int16),
                            "Expected at least 80 bytes, got 40 bytes.")]:
            try:
                call()
            except (ValueError, BufferError) as e:
                assert text in str(e), (text, str(e))
            else:
                raise AssertionError(text)
        # the empty C-order (2, 0) array is contiguous to copy() too (torch's strides (1, 1))
        empty = np.lib.stride_tricks.as_strided(np.empty(1, np.float32), (2, 0), (4, 4))
        nanocuda.copy(buf, empty)
        try:
            nanocuda.copy(buf, np.zeros((4, 2), np.float32)[:, 0])
        except ValueError as e:
            assert "not contiguous" in str(e), e
        else:
            raise AssertionError("a strided array is not contiguous")
        odd = S.from_buffer(buf, (1,), dtype=np.dtype([("a", "i4"), ("b", "i1")]))
        assert odd.dtype == np.dtype([("a", "i4"), ("b", "i1")])
        print("ok")
    """)
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# --- __dlpack_c_exchange_api__, driven through ctypes as a native consumer would -----------

class _Api(__import__("ctypes").Structure):
    import ctypes as c
    _fields_ = [("major", c.c_uint32), ("minor", c.c_uint32), ("prev_api", c.c_void_p),
                ("allocator", c.PYFUNCTYPE(c.c_int, c.c_void_p, c.POINTER(c.c_void_p), c.c_void_p, c.c_void_p)),
                ("from_py", c.PYFUNCTYPE(c.c_int, c.c_void_p, c.POINTER(c.c_void_p))),
                ("to_py", c.PYFUNCTYPE(c.c_int, c.c_void_p, c.POINTER(c.c_void_p))),
                ("dltensor_from_py", c.PYFUNCTYPE(c.c_int, c.c_void_p, c.c_void_p)),
                ("current_stream", c.PYFUNCTYPE(c.c_int, c.c_int, c.c_int32, c.POINTER(c.c_void_p)))]


class _DLTensor(__import__("ctypes").Structure):
    import ctypes as c
    _fields_ = [("data", c.c_void_p), ("device_type", c.c_int32), ("device_id", c.c_int32),
                ("ndim", c.c_int32), ("code", c.c_uint8), ("bits", c.c_uint8), ("lanes", c.c_uint16),
                ("shape", c.POINTER(c.c_int64)), ("strides", c.POINTER(c.c_int64)), ("byte_offset", c.c_uint64)]


def _exchange_api():
    import ctypes

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.argtypes, get.restype = (ctypes.py_object, ctypes.c_char_p), ctypes.c_void_p
    capsule = StridedMemoryView.__dlpack_c_exchange_api__
    assert StridedMemoryView.__c_dlpack_exchange_api__ is capsule
    return ctypes.cast(get(capsule, b"dlpack_exchange_api"), ctypes.POINTER(_Api)).contents


def test_exchange_api_reads_and_hands_over_views():
    import ctypes

    api = _exchange_api()
    assert (api.major, api.minor) >= (1, 0) and not api.prev_api
    out = ctypes.c_void_p(5)
    assert api.current_stream(1, 0, ctypes.byref(out)) == 0 and not out.value
    src = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    v = view(src)
    t = _DLTensor()
    assert api.dltensor_from_py(id(v), ctypes.byref(t)) == 0
    assert t.data == src.ctypes.data and t.ndim == 2 and (t.code, t.bits, t.lanes) == (0, 32, 1)
    assert [t.shape[i] for i in range(2)] == [3, 2] and [t.strides[i] for i in range(2)] == [4, 2]
    with pytest.raises(TypeError, match="must be a StridedMemoryView"):
        api.dltensor_from_py(id(object()), ctypes.byref(t))
    managed = ctypes.c_void_p()
    assert api.from_py(id(v), ctypes.byref(managed)) == 0 and managed.value
    back = ctypes.c_void_p()
    assert api.to_py(managed, ctypes.byref(back)) == 0
    again = ctypes.cast(back, ctypes.py_object).value
    ctypes.pythonapi.Py_DecRef.argtypes = (ctypes.py_object,)
    ctypes.pythonapi.Py_DecRef(again)  # to_py gave a new reference
    assert isinstance(again, StridedMemoryView) and again.shape == (3, 2) and again.ptr == v.ptr
    np.testing.assert_array_equal(np.from_dlpack(again), src)
    with pytest.raises(RuntimeError, match="tensor cannot be NULL"):
        api.to_py(None, ctypes.byref(back))
    with pytest.raises(NotImplementedError, match="not supported"):
        api.allocator(None, ctypes.byref(out), None, None)


def test_dlpack_export_refusals_in_cuda_cores_words():
    v = view(np.zeros(4, np.uint8))
    with pytest.raises(BufferError, match=r"dl_device other than None .*got \(\)"):
        v.__dlpack__(dl_device=())
    assert "dltensor" in repr(v.__dlpack__(dl_device=v.__dlpack_device__()))  # its own device is fine
    with pytest.raises(BufferError, match=r"^Expected max_version tuple\[int, int\], got \(9, 8, 7\)$"):
        v.__dlpack__(max_version=(9, 8, 7))
    with pytest.raises(BufferError, match=r"^Expected max_version tuple\[int, int\], got \(\)$"):
        v.__dlpack__(max_version=())


def test_torch_tensors_cai_v2_read_through_dlpack():
    # PyTorch publishes __cuda_array_interface__ v2; a torch.Tensor is read through DLPack
    # instead (as cuda.core does), other v2 producers stay refused.
    base = np.arange(6, dtype=np.float32).reshape(2, 3)

    class Tensor:
        __module__ = "torch"

        def __init__(self):
            self.__cuda_array_interface__ = {"version": 2, "shape": (2, 3), "typestr": "<f4",
                                             "data": (base.ctypes.data, False)}

        def __dlpack__(self, **kwargs):
            return base.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return base.__dlpack_device__()

    t = Tensor()
    v = StridedMemoryView.from_cuda_array_interface(t, stream_ptr=-1)
    assert v.ptr == base.ctypes.data and v.shape == (2, 3) and v.dtype == np.float32
    assert v.exporting_obj is t
    with pytest.raises(BufferError, match="stream=None is ambiguous"):
        StridedMemoryView.from_cuda_array_interface(t, stream_ptr=None)
