"""StridedMemoryView and the one array model on a GPU: DLPack export to torch/CuPy, the
consumer stream passed to producers, as_tensor_map with cuda.core's arguments, and the empty
C-order (2, 0) array contiguous to copy(), the Launcher and StridedMemoryView alike."""

import numpy as np
import pytest

import nanocuda
from nanocuda import Device
from nanocuda.utils import StridedMemoryView

pytestmark = pytest.mark.gpu

ADD = r"""
extern "C" __global__ void add(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
"""


@pytest.fixture
def dev():
    d = Device()
    d.set_current()
    return d


class DeviceArray:
    """A Buffer with a shape, through __cuda_array_interface__ (no DLPack)."""

    def __init__(self, buf, shape, typestr="<f4"):
        self.buf = buf
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "strides": None,
                                         "data": (int(buf.handle), False), "version": 3}


def test_dlpack_export_to_torch_and_cupy(dev):
    torch = pytest.importorskip("torch")
    t = torch.arange(24, dtype=torch.float32, device="cuda").reshape(4, 6)[:, ::2]
    s = dev.create_stream()
    v = StridedMemoryView.from_dlpack(t, stream_ptr=s.handle)
    assert v.strides == (6, 2) and v.device_id == dev.device_id and v.exporting_obj is t
    assert v.__dlpack_device__() == (2, dev.device_id)
    back = torch.from_dlpack(v)
    assert back.data_ptr() == t.data_ptr() and back.stride() == (6, 2) and torch.equal(back, t)
    cp = pytest.importorskip("cupy")
    c = cp.from_dlpack(StridedMemoryView.from_dlpack(t, stream_ptr=-1))
    assert c.data.ptr == t.data_ptr() and c.shape == (4, 3)


def test_cai_view_exports_device_memory(dev):
    buf = dev.allocate(64, stream=dev.default_stream)
    v = StridedMemoryView.from_cuda_array_interface(DeviceArray(buf, (16,)), stream_ptr=-1)
    assert v.__dlpack_device__() == (2, dev.device_id) and v.dtype == np.float32
    assert "dltensor" in repr(v.__dlpack__())
    dev.default_stream.sync()


def test_from_dlpack_passes_the_consumer_stream(dev):
    class Producer:
        def __init__(self, t):
            self.t, self.streams = t, []

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

        def __dlpack__(self, stream=None, **kw):
            self.streams.append(stream)
            return self.t.__dlpack__(stream=stream, **kw)

    torch = pytest.importorskip("torch")
    p = Producer(torch.zeros(8, device="cuda"))
    s = dev.create_stream()
    StridedMemoryView.from_dlpack(p, stream_ptr=s.handle)
    assert p.streams and p.streams[0] == s.handle
    with pytest.raises(BufferError, match="stream=None is ambiguous"):
        StridedMemoryView.from_dlpack(p)


def test_as_tensor_map_takes_cuda_core_arguments(dev):
    if not dev.properties.tensor_map_access_supported:
        pytest.skip("TMA needs compute capability 9.0+")
    buf = dev.allocate(64 * 64 * 4, stream=dev.default_stream)
    v = StridedMemoryView.from_cuda_array_interface(DeviceArray(buf, (64, 64)), stream_ptr=-1)
    ref = nanocuda.TensorMap.tiled_from_pointer(int(buf.handle), "float32", (64, 64), None, box=(32, 32),
                                                interleave="none", swizzle="none",
                                                l2_promotion="none", oob_fill="zero")
    by_name = v.as_tensor_map(box_dim=(32, 32), data_type="FLOAT32")  # cuda.core's enum name
    by_dict = v.as_tensor_map(options={"box_dim": (32, 32), "data_type": np.float32, "element_strides": (1, 1)})
    assert bytes(by_name) == bytes(ref) == bytes(by_dict)
    with pytest.raises(ValueError, match="rank must be between 1 and 5"):
        v.as_tensor_map(box_dim=(), data_type="FLOAT32")
    dev.default_stream.sync()


def test_empty_c_order_array_is_contiguous_everywhere(dev):
    torch = pytest.importorskip("torch")
    from nanocuda import _nanocuda as ext

    e = torch.empty((2, 0), dtype=torch.float32, device="cuda")  # strides (1, 1)
    f = torch.empty((2, 0), dtype=torch.float32, device="cuda")
    nanocuda.copy(f, e)  # nothing to copy, and not "not contiguous"
    v = StridedMemoryView.from_dlpack(e, stream_ptr=-1)
    w = StridedMemoryView.from_dlpack(f, stream_ptr=-1)
    w.copy_from(v, dev.default_stream)
    code = nanocuda.compile(ADD)
    launcher = code.get_kernel("add").bind(nanocuda.LaunchConfig(grid=1, block=32))
    for i in range(3):
        ext._internal.launcher_require(launcher, i, [2 | 32 << 8 | 1 << 16], True)
    launcher(e, e, f, 0)
    with pytest.raises(ValueError, match="must be contiguous"):
        launcher(torch.ones(4, 2, device="cuda")[:, 0], e, f, 0)
    torch.cuda.synchronize()
