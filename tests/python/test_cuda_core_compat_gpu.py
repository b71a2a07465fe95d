"""cuda.core's runtime surface on a real GPU, written the way a cuda.core user writes it
(only the import differs): Device, streams/events, launch argument kinds, Buffer,
StridedMemoryView and system. Where cuda.core is installed, results are compared with it."""

import ctypes

import numpy as np
import pytest

import nanocuda

from nanocuda import (Device, EventOptions, LaunchConfig, StreamOptions, launch, system)
from nanocuda import compile as nc_compile
from nanocuda.utils import StridedMemoryView, args_viewable_as_strided_memory

pytestmark = pytest.mark.gpu

KERNELS = r"""
struct Pair { int a; float b; };
extern "C" __global__ void mix(unsigned long long* out, unsigned long long n, float f, double d,
                               Pair p, int i, signed char c) {
  out[0] = n; out[1] = (unsigned long long)(f * 1000); out[2] = (unsigned long long)(d * 1000);
  out[3] = (unsigned long long)p.a; out[4] = (unsigned long long)(p.b * 1000);
  out[5] = (unsigned long long)(long long)i; out[6] = (unsigned long long)(long long)c;
}
extern "C" __global__ void add1(float* x, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
"""


@pytest.fixture(scope="module")
def kernels():
    lib = nc_compile(KERNELS)
    return lib.get_kernel("mix"), lib.get_kernel("add1")


def test_device_entry_point():
    dev = Device()
    dev.set_current()
    assert Device(0) is Device(0) and Device(dev) is dev and Device() is dev
    assert dev.device_id == 0 and isinstance(dev.name, str) and dev.uuid
    cc = dev.compute_capability
    assert (cc.major, cc.minor) == tuple(cc) and cc.major >= 7
    assert dev.arch.startswith(f"{cc.major}{cc.minor}")
    props = dev.properties
    assert props is dev.properties
    assert props.warp_size == 32 and props.multiprocessor_count > 0
    assert props.compute_capability_major == cc.major and props.max_threads_per_block >= 1024
    assert dev.context.handle != 0 and dev.context == dev.create_stream().context
    with pytest.raises(ValueError, match="no such device"):
        Device(system.get_num_devices())


def test_streams_events_and_timing(kernels):
    _, add1 = kernels
    dev = Device()
    dev.set_current()
    s = dev.create_stream(options=StreamOptions(nonblocking=True, priority=0))
    assert s.device is dev and s.is_nonblocking
    buf = dev.allocate(4 * 4096, stream=s)
    start = s.record(options=EventOptions(enable_timing=True))
    for _ in range(10):
        launch(s, LaunchConfig(grid=16, block=256), add1, buf, 4096)
    end = s.record(options=EventOptions(enable_timing=True))
    end.sync()
    ms = end - start
    assert isinstance(ms, float) and ms >= 0 and end.is_done
    other = dev.create_stream()
    other.wait(end)   # an event
    other.wait(s)     # a stream
    other.sync()
    e = dev.create_event(EventOptions(busy_waited_sync=True))
    assert e.is_sync_busy_waited and e.is_timing_disabled
    with pytest.raises(TypeError, match="must be bound"):  # cuda.core: IPC events come from Stream.record
        dev.create_event(EventOptions(ipc_enabled=True))
    ipc = s.record(options=EventOptions(ipc_enabled=True))
    assert ipc.is_ipc_enabled
    # a foreign stream through __cuda_stream__, both ways
    wrapped = dev.create_stream(s)
    assert wrapped.handle == s.handle
    buf.close(stream=s)
    s.sync()
    closed = dev.create_stream()
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        launch(closed, LaunchConfig(grid=1, block=1), add1, 0, 0)
    with pytest.raises(ValueError, match="closed"):
        closed.record()


def test_launch_argument_kinds(kernels):
    mix, _ = kernels
    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    out = dev.allocate(8 * 8, stream=s)

    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_float)]

    launch(s, LaunchConfig(grid=1, block=1), mix, out, np.uint64(50000), np.float32(1.5), 2.25,
           Pair(7, 0.5), ctypes.c_int(-3), np.int8(-2))
    host = np.empty(8, np.uint64)
    import nanocuda
    nanocuda.copy(host, out, stream=s)
    s.sync()
    assert host[:7].view(np.int64).tolist() == [50000, 1500, 2250, 7, 500, -3, -2]
    with pytest.raises(ValueError, match="kernel 'mix', parameter 2"):
        launch(s, LaunchConfig(grid=1, block=1), mix, out, 1, np.float64(1.0), 1.0, Pair(1, 1), 1, 1)


def test_launch_with_cupy_scalars_and_arrays(kernels):
    cp = pytest.importorskip("cupy")
    _, add1 = kernels
    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    x = cp.zeros(1000, dtype=cp.float32)
    dev.sync()
    launch(s, LaunchConfig(grid=4, block=256), add1, x.data.ptr, cp.uint64(x.size))
    launch(s, LaunchConfig(grid=4, block=256), add1, x, cp.uint64(x.size))
    s.sync()
    assert float(x.sum()) == 2000.0
    cps = cp.cuda.Stream(non_blocking=True)  # anything with __cuda_stream__
    launch(cps, LaunchConfig(grid=4, block=256), add1, x, x.size)
    cps.synchronize()
    assert float(x[0]) == 3.0


def test_buffer_surface():
    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    a = dev.allocate(1024, stream=s)
    assert a.handle == a.ptr and a.size == 1024 and a.device_id == 0
    assert a.is_device_accessible and not a.is_host_accessible
    assert a.memory_resource is dev.memory_resource
    a.fill(7, stream=s)
    b = a.copy_to(stream=s)
    c = dev.allocate(1024, stream=s)
    c.copy_from(b, stream=s)
    c.fill(0x01020304, 4, stream=s)
    host = np.empty(1024, np.uint8)
    import nanocuda
    nanocuda.copy(host, b, stream=s)
    s.sync()
    assert (host == 7).all()
    nanocuda.copy(host, c, stream=s)
    s.sync()
    assert host[:4].tolist() == [4, 3, 2, 1]
    with pytest.raises(ValueError, match="not a multiple of width 4"):
        dev.allocate(6, stream=s).fill(1, 4, stream=s)
    with pytest.raises(ValueError, match="differ in size"):
        dev.allocate(8, stream=s).copy_from(a, stream=s)
    view = nanocuda.Buffer.from_handle(a.handle, 16)
    assert view.handle == a.handle and view.memory_resource is None
    view.close()
    a.close(stream=s)
    assert a.is_closed


def test_strided_memory_view_and_tensor_map():
    cp = pytest.importorskip("cupy")
    dev = Device()
    dev.set_current()
    t = cp.zeros((256, 128), dtype=cp.float16)
    v = StridedMemoryView.from_dlpack(t, stream_ptr=-1)
    assert v.ptr == t.data.ptr and v.shape == (256, 128) and v.strides == (128, 1)
    assert v.dtype == np.float16 and v.device_id == 0 and v.is_device_accessible and not v.readonly
    v2 = StridedMemoryView.from_cuda_array_interface(t[:, ::2], stream_ptr=-1)
    assert v2.strides == (128, 2)
    tm = v.as_tensor_map((64, 64))
    import nanocuda
    same = nanocuda.TensorMap.tiled(t, (64, 64), swizzle="none", l2_promotion="none")
    assert bytes(tm) == bytes(same)

    @args_viewable_as_strided_memory((0,))
    def shape_of(x, stream):
        return x.view(stream.handle).shape

    assert shape_of(t, dev.create_stream()) == (256, 128)


def test_strided_memory_view_copies_between_host_and_device():
    # cuda.core 1.2 declares copy_from/copy_to but raises NotImplementedError; nanocuda copies
    # C-contiguous views (one nanocuda.copy), in stream order, host-to-host aside.
    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    buf = dev.allocate(4 * 24, stream=s)
    d = StridedMemoryView.from_buffer(buf, (4, 6), dtype=np.float32)
    d2 = StridedMemoryView.from_buffer(dev.allocate(4 * 24, stream=s), (4, 6), itemsize=4)
    assert d2.dtype is None and d.device_id == 0 and d.is_device_accessible
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    d.copy_from(StridedMemoryView.from_dlpack(host, stream_ptr=-1), s)  # host -> device
    d2.copy_from(d, s, blocking=True)  # device -> device (same element size)
    back = np.zeros_like(host)
    d2.copy_to(StridedMemoryView.from_dlpack(back, stream_ptr=-1), s)  # device -> host, waits
    np.testing.assert_array_equal(back, host)
    with pytest.raises(ValueError, match=r"Expected at least 200 bytes, got 96 bytes"):
        StridedMemoryView.from_buffer(buf, (5, 10), dtype=np.float32)
    with pytest.raises(ValueError, match=r"itemsize 2 does not match dtype.itemsize 4"):
        StridedMemoryView.from_buffer(buf, (4, 6), itemsize=2, dtype=np.float32)
    strided = StridedMemoryView.from_buffer(buf, (4, 3), (6, 2), dtype=np.float32)
    assert strided.strides == (6, 2)
    with pytest.raises(ValueError, match="both views must be C-contiguous"):
        strided.copy_to(StridedMemoryView.from_dlpack(np.zeros((4, 3), np.float32), stream_ptr=-1), s)
    pinned = nanocuda.LegacyPinnedMemoryResource().allocate(4 * 24, stream=s)
    p = StridedMemoryView.from_buffer(pinned, (24,), dtype=np.float32)
    assert p.device_id == -1 and p.is_device_accessible
    p.copy_from(StridedMemoryView.from_buffer(buf, (24,), dtype=np.float32), s)
    np.testing.assert_array_equal(np.from_dlpack(pinned).view(np.float32), host.ravel())


def test_system():
    assert system.get_num_devices() >= 1
    major, minor = system.get_driver_version()
    assert major >= 12
    assert system.get_driver_version_full()[:2] == (major, minor)
    try:
        kmd = system.get_kernel_mode_driver_version()
    except RuntimeError:
        pytest.skip("no /proc/driver/nvidia/version here")
    assert kmd[0] >= 500


def test_results_match_cuda_core():
    core = pytest.importorskip("cuda.core", reason="cuda.core not installed")
    cdev = core.Device(0)
    ndev = Device(0)
    assert cdev.name == ndev.name
    # nanocuda keeps nvidia-smi's "GPU-" prefix and the "a" of arch-specific targets ("90a"),
    # so f"sm_{dev.arch}" keeps compiling Hopper features; the rest is the same.
    assert ndev.uuid.removeprefix("GPU-") == cdev.uuid.removeprefix("GPU-")
    assert ndev.arch.startswith(cdev.arch)
    assert tuple(cdev.compute_capability) == tuple(ndev.compute_capability)
    assert cdev.properties.multiprocessor_count == ndev.properties.multiprocessor_count
    assert cdev.properties.max_shared_memory_per_block_optin == ndev.properties.max_shared_memory_per_block_optin
    import importlib

    try:
        core_count = importlib.import_module("cuda.core.system").get_num_devices()
    except Exception:  # noqa: BLE001 - cuda.core's system may need NVML
        return
    assert core_count == system.get_num_devices()


def test_launcher_slot_switches_between_scalar_kinds(kernels):
    mix, _ = kernels
    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    out = dev.allocate(64, stream=s)
    bound = mix.bind(LaunchConfig(grid=1, block=1), stream=s)
    pair = np.array([(1, 0.25)], dtype=[("a", "<i4"), ("b", "<f4")])[0]
    host = np.empty(8, np.int64)
    import nanocuda
    for n, f in [(np.uint64(5), np.float32(0.5)), (ctypes.c_uint64(6), 0.75), (7, np.float32(1.0))]:
        bound(out, n, f, np.float64(0.5), pair, np.int32(3), np.int8(1))
        nanocuda.copy(host, out, stream=s)
        s.sync()
        assert host[0] == int(getattr(n, "value", n)) and host[1] == int(float(f) * 1000)
    with pytest.raises(ValueError, match="parameter 2"):
        bound(out, 1, np.float64(1.0), 0.5, pair, 3, 1)
