"""cuda.core's runtime surface on nanocuda, the parts that need no GPU: construction,
validation, error messages, argument kinds, and (against tools/mock_libcuda.c, a driver
that does nothing) Device's one-object-per-ordinal-per-thread rule."""

import ctypes
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nanocuda
from nanocuda import EventOptions, LaunchConfig, StreamOptions, _nanocuda
from nanocuda.utils import StridedMemoryView, args_viewable_as_strided_memory


# --- LaunchConfig ----------------------------------------------------------------------


def test_launch_config_cuda_core_keywords():
    c = LaunchConfig(grid=(4, 2), block=128, shmem_size=1024, cluster=(2, 1, 1), cooperative_launch=False)
    assert c.grid == (4, 2, 1) and c.block == (128, 1, 1)
    assert c.shmem_size == 1024 == c.shared_mem
    assert c.cluster == (2, 1, 1)
    assert c.cooperative_launch is False and c.cooperative is False
    c = LaunchConfig(grid=8, block=32, cooperative_launch=True, shmem_size=None)
    assert c.cooperative and c.cooperative_launch and c.shmem_size == 0
    assert LaunchConfig(grid=np.int64(3), block=np.uint32(64)).grid == (3, 1, 1)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(grid=-1, block=32), ValueError, r"grid dimensions must be between 1 and 2\*\*31 - 1, got -1"),
    (dict(grid=0, block=32), ValueError, r"grid dimensions must be between 1"),
    (dict(grid="a", block=32), TypeError, r"grid must be an int or a tuple of 1-3 ints, got a str"),
    (dict(grid=1, block=2**40), ValueError, r"block dimensions must be between 1 and 2\*\*31 - 1, got 1099511627776"),
    (dict(grid=(1, 2, 3, 4), block=32), ValueError, r"grid must be an int or a tuple of 1-3 ints, got 4 values"),
    (dict(grid=(1, "x"), block=32), TypeError, r"grid must be an int or a tuple"),
    (dict(grid=1.5, block=32), TypeError, r"grid must be .* got a float"),
    (dict(grid=True, block=32), TypeError, r"grid must be .* got a bool"),
    (dict(grid=1, block=32, shmem_size=-1), ValueError, r"shmem_size must be between 0 and 2\*\*32 - 1 bytes, got -1"),
    (dict(grid=1, block=32, shared_mem="x"), TypeError, r"shared_mem must be an int \(bytes\), got a str"),
    (dict(grid=1, block=32, shared_mem=1, shmem_size=1), TypeError, r"not both"),
    (dict(grid=1, block=32, cooperative=True, cooperative_launch=True), TypeError, r"not both"),
    (dict(grid=1, block=32, cooperative_launch="yes"), TypeError, r"cooperative_launch must be a bool"),
    (dict(grid=1, block=32, cluster=(0, 1)), ValueError, r"cluster dimensions must be between 1"),
    (dict(block=32), TypeError, r"grid= and block= are required"),
    (dict(grid=1, block=2048), ValueError, r"block"),  # the existing 1024-thread rule
])
def test_launch_config_bad_values_name_the_argument(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        LaunchConfig(**kwargs)


# --- options dataclasses -----------------------------------------------------------------


def test_stream_and_event_options():
    assert StreamOptions() == StreamOptions(nonblocking=True, priority=None)
    assert StreamOptions(priority=-1).priority == -1
    with pytest.raises(TypeError, match="priority must be an int or None"):
        StreamOptions(priority="high")
    assert EventOptions() == EventOptions(enable_timing=False, busy_waited_sync=False, ipc_enabled=False)
    assert EventOptions(enable_timing=True, ipc_enabled=True).timing_enabled  # refused by Stream.record
    with pytest.raises(TypeError, match="enable_timing must be a bool"):
        EventOptions(enable_timing="yes")


# --- Device construction without a driver ----------------------------------------------


@pytest.mark.parametrize("arg, exc, match", [
    (-1, ValueError, "device_id must be a non-negative ordinal, got -1"),
    ("0", ValueError, "Device: device '0' is not a device; give an int ordinal, a Device, or 'cuda:N'"),
    (1.0, TypeError, "got float"),
    (True, TypeError, "got bool"),
])
def test_device_bad_ordinal(arg, exc, match):
    with pytest.raises(exc, match=match):
        nanocuda.Device(arg)


# --- launch argument kinds (packed against hand-made layouts, no GPU) --------------------

pack = _nanocuda._testing.pack_args


class Pair(ctypes.Structure):
    _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_float)]


class Handle:
    """Like cuda.bindings' CUdeviceptr: int() gives the address, getPtr() exists."""

    def __init__(self, v):
        self.v = v

    def __int__(self):
        return self.v

    def getPtr(self):
        return self.v


class Index:
    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


def test_every_cuda_core_argument_kind_packs():
    rec = np.array([(3, 2.5)], dtype=[("a", "<i4"), ("b", "<f4")])[0]
    layout = [(0, 8), (8, 4), (16, 8), (24, 4), (32, 8), (40, 8), (48, 8), (56, 8), (64, 8), (72, 1), (73, 1)]
    out = pack(layout, "k", np.uint64(50000), np.float32(1.5), ctypes.c_void_p(0x1234), ctypes.c_int(-3),
               Pair(7, 0.5), rec, Handle(0xABCD), Index(99), 2.0, np.bool_(True), True)
    assert struct.unpack_from("<Q", out, 0)[0] == 50000
    assert struct.unpack_from("<f", out, 8)[0] == 1.5
    assert struct.unpack_from("<Q", out, 16)[0] == 0x1234
    assert struct.unpack_from("<i", out, 24)[0] == -3
    assert struct.unpack_from("<if", out, 32) == (7, 0.5)
    assert struct.unpack_from("<if", out, 40) == (3, 2.5)
    assert struct.unpack_from("<Q", out, 48)[0] == 0xABCD
    assert struct.unpack_from("<q", out, 56)[0] == 99
    assert struct.unpack_from("<d", out, 64)[0] == 2.0
    assert out[72] == 1 and out[73] == 1


def test_argument_size_checks_still_apply_to_new_kinds():
    with pytest.raises(ValueError, match=r"kernel 'k', parameter 0"):
        pack([(0, 4)], "k", Pair(1, 2.0))  # an 8-byte struct into a 4-byte parameter
    with pytest.raises(ValueError, match="parameter 0"):
        pack([(0, 1)], "k", Index(1000))  # does not fit in 1 byte
    with pytest.raises(TypeError, match="cannot pass a object"):
        pack([(0, 8)], "k", object())


# --- StridedMemoryView on host arrays -------------------------------------------------


def test_strided_memory_view_of_numpy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    assert v.ptr == a.ctypes.data and v.shape == (3, 4) and v.strides == (4, 1)
    assert v.dtype == np.float32 and v.device_id == -1 and not v.is_device_accessible
    assert v.readonly is False and v.exporting_obj is a
    t = a.T
    with pytest.deprecated_call(match="deprecated"):  # as in cuda.core 1.2
        vt = StridedMemoryView(t, -1)
    assert vt.shape == (4, 3) and vt.strides == (1, 4)
    a.flags.writeable = False
    assert StridedMemoryView.from_dlpack(a, stream_ptr=-1).readonly is True


def test_strided_memory_view_errors():
    with pytest.raises(BufferError, match="does not support any data exchange protocol"):
        StridedMemoryView(object())
    with pytest.raises(BufferError, match="has no __dlpack__"):
        StridedMemoryView.from_dlpack([1, 2])
    with pytest.raises(BufferError, match="has no __cuda_array_interface__"):
        StridedMemoryView.from_cuda_array_interface(np.zeros(2))
    with pytest.raises(TypeError, match="stream_ptr must be an int"):
        StridedMemoryView.from_dlpack(np.zeros(2), stream_ptr="s")
    with pytest.raises(ValueError, match="StridedMemoryView.as_tensor_map: .*on the CPU"):
        StridedMemoryView.from_dlpack(np.zeros((64, 64), np.float16), -1).as_tensor_map((16, 16))


class _HostArray:
    """Only numpy's __array_interface__ (no DLPack): what from_array_interface is for."""

    def __init__(self, a):
        self.a = a
        self.__array_interface__ = a.__array_interface__


def test_strided_memory_view_from_array_interface():
    a = np.arange(24, dtype=np.int16).reshape(4, 6)
    v = StridedMemoryView.from_array_interface(a[:, ::2])
    assert v.ptr == a.ctypes.data and v.shape == (4, 3) and v.strides == (6, 2)
    assert v.dtype == np.int16 and not v.is_device_accessible  # device_id: the current device
    a.flags.writeable = False
    w = StridedMemoryView.from_any_interface(_HostArray(a))
    assert w.shape == (4, 6) and w.strides is None and w.readonly is True  # no strides given: None
    assert StridedMemoryView.from_any_interface(a, -1).shape == (4, 6)  # DLPack first
    with pytest.raises(BufferError, match="from_array_interface: a object has no __array_interface__"):
        StridedMemoryView.from_array_interface(object())


def test_strided_memory_view_from_buffer_and_copy_errors():
    with pytest.raises(TypeError, match="from_buffer: buffer must be a nanocuda Buffer, got ndarray"):
        StridedMemoryView.from_buffer(np.zeros(4), (4,), dtype=np.float32)
    a, b = np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)
    va, vb = StridedMemoryView.from_dlpack(a, -1), StridedMemoryView.from_dlpack(b, -1)
    with pytest.raises(ValueError, match=r"copy_from: the views differ: shape \(3, 2\)"):
        va.copy_from(vb, None)
    with pytest.raises(ValueError, match="copy_to: both views must be C-contiguous"):
        StridedMemoryView.from_dlpack(b.T, -1).copy_to(va)
    with pytest.raises(TypeError, match="copy_from: the other view must be a StridedMemoryView"):
        va.copy_from(b, None)
    a.flags.writeable = False
    with pytest.raises(ValueError, match="copy_from: the destination view is read-only"):
        StridedMemoryView.from_dlpack(a, -1).copy_from(StridedMemoryView.from_dlpack(np.zeros((2, 3), np.float32), -1))


def test_cuda_core_module_names():
    from nanocuda.graph import Graph, GraphBuilder, GraphCompleteOptions, GraphCondition

    assert GraphBuilder is nanocuda.GraphBuilder and Graph is nanocuda.Graph
    assert GraphCompleteOptions is nanocuda.GraphCompleteOptions
    assert issubclass(nanocuda.ConditionalHandle, GraphCondition)  # a builder's handle is one too
    assert nanocuda.TensorMapDescriptor is nanocuda.TensorMap
    o = nanocuda.TensorMapDescriptorOptions(box_dim=(64, 64), swizzle="128B")
    assert o.box_dim == (64, 64) and o.swizzle == "128B" and o.oob_fill is None
    assert issubclass(nanocuda.LegacyPinnedMemoryResource, nanocuda.PinnedMemoryResource)
    # the default streams are read lazily (no driver at import) but listed
    assert {"LEGACY_DEFAULT_STREAM", "PER_THREAD_DEFAULT_STREAM", "graph"} <= set(dir(nanocuda))


def test_args_viewable_as_strided_memory():
    @args_viewable_as_strided_memory((0,))
    def f(x, y):
        return x.view(-1), y

    a = np.zeros(5, np.int32)
    v, y = f(a, 3)
    assert isinstance(v, StridedMemoryView) and v.shape == (5,) and y == 3
    with pytest.raises(TypeError, match="arg_indices must be a tuple of ints"):
        args_viewable_as_strided_memory(0)


# --- system, exports ----------------------------------------------------------------------


def test_system_without_a_gpu_call():
    from nanocuda import system

    assert isinstance(system.CUDA_BINDINGS_NVML_IS_COMPATIBLE, bool)  # True where NVML loads
    assert system.get_process_name(os.getpid())  # /proc/PID/comm
    with pytest.raises(system.NotFoundError, match="no process"):
        system.get_process_name(2**30)
    with pytest.raises(TypeError, match="pid must be a non-negative int"):
        system.get_process_name("1")
    for name in system.__all__:
        assert hasattr(system, name)


def test_cuda_core_names_are_exported():
    for name in ["Device", "Stream", "Event", "Buffer", "LaunchConfig", "launch", "StreamOptions",
                 "EventOptions", "Context", "DeviceProperties", "ComputeCapability", "GraphBuilder",
                 "DeviceMemoryResource", "system", "utils", "StridedMemoryView"]:
        assert name in nanocuda.__all__, name
        assert hasattr(nanocuda, name)
    for cls, names in [(nanocuda.Device, ["device_id", "create_stream", "create_event", "allocate", "properties",
                                          "context", "memory_resource", "create_graph_builder", "can_access_peer",
                                          "set_current", "sync", "compute_capability", "arch", "uuid"]),
                       (nanocuda.Stream, ["record", "wait", "from_handle", "device", "context", "__cuda_stream__",
                                          "is_nonblocking", "priority", "sync", "close"]),
                       (nanocuda.Event, ["__sub__", "is_timing_disabled", "is_sync_busy_waited", "is_ipc_enabled",
                                         "is_done", "sync", "device", "context"]),
                       (nanocuda.Buffer, ["handle", "size", "device_id", "memory_resource", "is_device_accessible",
                                          "is_host_accessible", "copy_to", "copy_from", "fill", "close",
                                          "from_handle", "__dlpack__"])]:
        for n in names:
            assert hasattr(cls, n), f"{cls.__name__}.{n}"


def test_buffer_bad_sizes_are_clear():
    with pytest.raises(ValueError, match="Buffer: size must be >= 0, got -5"):
        nanocuda.Buffer(-5)
    with pytest.raises(TypeError, match="Buffer: size must be an int"):
        nanocuda.Buffer("10")


# --- Device singletons against a driver that does nothing -------------------------------


def test_device_is_one_object_per_ordinal_per_thread(mock_libcuda):
    code = textwrap.dedent("""
        import threading
        import nanocuda
        from nanocuda import Device
        d = Device(0)
        assert Device(0) is d and Device() is d and Device(d) is d and Device(device_id=0) is d
        assert nanocuda.Device(0) == d and hash(d) == 0 and d.device_id == 0
        s = d.create_stream()
        assert s.device is d  # (the mock driver reports no stream flags)
        s2 = d.create_stream(options=nanocuda.StreamOptions(nonblocking=False, priority=0))
        s3 = d.create_stream(options={"priority": 0})
        try:
            d.create_stream(options={"prio": 0})
        except ValueError as e:
            assert "unknown option 'prio' (known: nonblocking, priority)" in str(e), e
        else:
            raise AssertionError("unknown option accepted")
        e = d.create_event(nanocuda.EventOptions(enable_timing=True))
        assert not e.is_timing_disabled and e.device is d
        assert d.create_event().is_timing_disabled
        assert d.create_event({"busy_waited_sync": True}).is_sync_busy_waited
        assert isinstance(s.record(), nanocuda.Event)
        assert s.record(e) is e
        s.wait(e); s.wait(s2)
        assert d.properties is d.properties
        assert isinstance(d.properties.multiprocessor_count, int)
        cc = d.compute_capability
        assert isinstance(cc, nanocuda.ComputeCapability) and cc.major == cc[0]
        assert isinstance(d.context, nanocuda.Context) and s.context == s.context
        other = []
        t = threading.Thread(target=lambda: other.append(Device(0)))
        t.start(); t.join()
        assert other[0] is not d and other[0] == d
        try:
            Device(1)
        except ValueError as err:
            assert "no such device" in str(err), err
        else:
            raise AssertionError("Device(1) accepted")
        s.close()
        try:
            s.__cuda_stream__()
        except ValueError as err:
            assert "the stream is closed" in str(err), err
        else:
            raise AssertionError("closed stream used")
        print("ok")
    """)
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                         cwd="/tmp")
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("value", [np.int8(-3), np.uint8(250), np.int16(-300), np.uint16(60000), np.int32(-7),
                                   np.uint32(4_000_000_000), np.int64(-(2**40)), np.uint64(2**63 + 5),
                                   np.float16(1.5), np.float32(3.25), np.float64(-2.5), np.bool_(True),
                                   np.complex64(1 + 2j), np.longlong(9)])
def test_numpy_scalars_pack_their_exact_bytes(value):
    # numpy scalars are read at their in-object offset (no buffer protocol per call); the
    # bytes must be exactly the value's, in every slot.
    n = value.nbytes
    out = pack([(0, n), (16, n)], "k", value, value)
    assert out[:n] == value.tobytes() and out[16:16 + n] == value.tobytes()
    with pytest.raises(ValueError, match="parameter 0"):
        pack([(0, n * 2 if n < 16 else 1)], "k", value)
