"""Device, streams, events and memory on a real GPU, with PyTorch and CuPy interop."""

import numpy as np
import pytest

import nanocuda
from testing_hooks import hooks

pytestmark = pytest.mark.gpu


def test_device_properties(device):
    assert nanocuda.Device.count() >= 1
    assert device.name
    assert len(device.uuid) == 36 and not device.uuid.startswith("GPU-")
    major, minor = device.compute_capability
    assert device.arch == f"{major}{minor}" and device.target_arch.startswith(device.arch)
    assert device.total_memory > 2**30
    assert device.multiprocessor_count == device.attribute(16)
    assert device.warp_size == 32
    free, total = device.memory_info
    assert 0 < free <= total
    with pytest.raises(ValueError, match="no such device"):
        nanocuda.Device(nanocuda.Device.count())


def test_stream_lifecycle(device):
    s = nanocuda.Stream(device=device, non_blocking=True, priority=0)
    assert s.is_owned and s.is_non_blocking
    version, handle = s.__cuda_stream__()
    assert version == 0 and handle == s.handle != 0
    assert s.query()
    s.sync()
    s.close()
    assert s.is_closed
    with pytest.raises(ValueError, match="closed"):
        s.sync()


def test_copy_round_trip_and_event_timing(stream):
    n = 1 << 24
    host = np.random.default_rng(0).integers(0, 255, n, dtype=np.uint8)
    back = np.zeros_like(host)
    buf = nanocuda.Buffer(n, stream=stream)
    other = nanocuda.Buffer(n, stream=stream)
    start = stream.record(timing=True)
    nanocuda.copy(buf, host, stream=stream)
    nanocuda.copy(other, buf, stream=stream)
    nanocuda.copy(back, other, stream=stream)
    end = stream.record(timing=True)
    end.sync()
    assert np.array_equal(host, back)
    ms = start.elapsed_time(end)
    assert 0 < ms < 1000


def test_pinned_memory_copy(stream):
    pinned = nanocuda.PinnedBuffer(4096)
    view = np.frombuffer(pinned.memoryview(), dtype=np.uint8)
    view[:] = np.arange(4096) % 251
    buf = nanocuda.Buffer(4096, stream=stream)
    nanocuda.copy(buf, pinned, stream=stream)
    nanocuda.memset(buf, 7, size=16, stream=stream)
    out = np.zeros(4096, dtype=np.uint8)
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    assert (out[:16] == 7).all()
    assert np.array_equal(out[16:], view[16:])
    pinned.close()


def test_copy_size_mismatch_is_an_error(stream):
    buf = nanocuda.Buffer(64, stream=stream)
    with pytest.raises(ValueError, match="dst has 64 bytes but src has 128"):
        nanocuda.copy(buf, np.zeros(128, dtype=np.uint8), stream=stream)


def test_buffer_context_manager_and_errors(stream):
    with nanocuda.Buffer(256, stream=stream) as buf:
        assert buf.ptr != 0 and buf.size == 256
    assert buf.is_closed
    with pytest.raises(ValueError, match="closed"):
        buf.ptr


@pytest.mark.needs_torch
def test_torch_round_trip_through_dlpack(stream):
    import torch

    buf = nanocuda.Buffer(4 * 1024, stream=stream, dtype="float32", shape=(32, 32))
    t = torch.from_dlpack(buf)
    assert t.is_cuda and t.shape == (32, 32) and t.dtype == torch.float32
    assert t.data_ptr() == buf.ptr
    t.fill_(3.0)
    torch.cuda.synchronize()
    out = np.zeros((32, 32), dtype=np.float32)
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    assert (out == 3.0).all()
    # And the other way: a torch tensor wherever a device pointer is taken.
    src = torch.arange(1024, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    nanocuda.copy(buf, src, stream=stream)
    stream.sync()
    assert torch.equal(t.flatten(), src)
    assert hooks.device_pointer(src) == src.data_ptr()


@pytest.mark.needs_torch
def test_torch_cpu_tensor_is_rejected():
    import torch

    with pytest.raises(ValueError, match="expected device memory.*the CPU"):
        hooks.device_pointer(torch.zeros(4))


@pytest.mark.needs_torch
def test_torch_stream_adoption(device):
    import torch

    ts = torch.cuda.Stream()
    s = nanocuda.Stream.adopt(ts)
    assert s.handle == ts.cuda_stream and not s.is_owned
    buf = nanocuda.Buffer(1 << 20, stream=s)
    nanocuda.memset(buf, 1, stream=s)
    s.sync()
    ns = nanocuda.Stream(device=device)
    ext = torch.cuda.ExternalStream(ns.handle)
    assert ext.cuda_stream == ns.handle


@pytest.mark.needs_cupy
def test_cupy_round_trip_through_cuda_array_interface(stream):
    import cupy

    buf = nanocuda.Buffer(256 * 2, stream=stream, dtype="float16", shape=(16, 16))
    arr = cupy.asarray(buf)
    assert arr.data.ptr == buf.ptr and arr.shape == (16, 16) and arr.dtype == cupy.float16
    arr[:] = 2
    cupy.cuda.Device().synchronize()
    out = np.zeros((16, 16), dtype=np.float16)
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    assert (out == 2).all()
    src = cupy.arange(256, dtype=cupy.float16).reshape(16, 16)
    cupy.cuda.Device().synchronize()
    nanocuda.copy(buf, src, stream=stream)
    stream.sync()
    assert bool((arr == src).all())
    # cupy arrays export DLPack too; both protocols give the same address.
    d = hooks.describe_array(src)
    assert d["ptr"] == src.data.ptr and d["shape"] == (16, 16) and d["dtype"] == "float16"


@pytest.mark.needs_cupy
def test_cupy_stream_adoption(device):
    import cupy

    cs = cupy.cuda.Stream(non_blocking=True)
    s = nanocuda.Stream.adopt(cs)
    assert s.handle == cs.ptr


def test_descriptor_and_layout_work_with_no_current_context():
    """In a fresh process no context is current (no torch); encodes and layout queries
    must still work (they once failed with CUDA_ERROR_INVALID_CONTEXT)."""
    import subprocess
    import sys

    code = (
        "import nanocuda\n"
        "b = nanocuda.Buffer(512 * 512 * 2)\n"
        "tm = nanocuda.TensorMap.tiled_from_pointer(b.ptr, 'float16', (512, 512), box=(64, 64))\n"
        "tm.replace_address(b.ptr)\n"
        "k = nanocuda.compile('extern \"C\" __global__ void k(int x) {}').get_kernel('k')\n"
        "print(len(bytes(tm)), [tuple(p) for p in k.param_layout])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "128 [(0, 4)]" in out.stdout
