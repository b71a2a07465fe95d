"""The raw fast paths on the GPU: Graph.update (index and source, errors), resource allocate
and Buffer.close (positional and keyword, bad sizes, stream order), Buffer arguments, and a
torch op whose dtype/contiguity checks moved into its Launchers (same errors as before)."""

import itertools

import numpy as np
import pytest

import nanocuda

pytestmark = pytest.mark.gpu
SOURCE = r"""
extern "C" __global__ void add_to(int* p, int v) { *p += v; }
extern "C" __global__ void add(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
"""
_count = itertools.count()


@pytest.fixture(scope="module")
def code():
    return nanocuda.compile(SOURCE)


def read_int(buf, stream):
    out = np.zeros(1, np.int32)
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    return int(out[0])


def test_graph_update_fast_path(code):
    stream = nanocuda.Stream()
    x, y = nanocuda.Buffer(4, stream=stream), nanocuda.Buffer(4, stream=stream)
    nanocuda.memset(x, 0, stream=stream)
    nanocuda.memset(y, 0, stream=stream)
    launch = code.get_kernel("add_to").bind(nanocuda.LaunchConfig(grid=1, block=1), stream=stream)
    graph = nanocuda.Graph()
    with graph.capture(stream):
        launch(x, 1)
        launch(x, 10)
    graph.update(1, y, 5)
    graph.update(0, x.ptr, 2)  # an int address works too
    graph.launch()
    assert (read_int(x, stream), read_int(y, stream)) == (2, 5)
    with pytest.raises(IndexError, match="no kernel node 2 .the graph has 2"):
        graph.update(2, x, 1)
    with pytest.raises(IndexError, match="no kernel node -1"):
        graph.update(-1, x, 1)
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        graph.update(0, x)
    with pytest.raises(TypeError, match="takes no further arguments"):
        graph.update(graph, 1)
    other = nanocuda.Graph()
    with other.capture(stream):
        launch(y, 100)
        launch(y, 1000)
    graph.update(target=other)  # the whole-graph form, by keyword
    graph.launch()
    assert read_int(y, stream) == 1105


def test_allocate_and_close_fast_paths():
    dev = nanocuda.Device(0)
    stream = nanocuda.Stream(device=dev)
    mr = nanocuda.DeviceMemoryResource(dev)
    for buf in (mr.allocate(1 << 20, stream), mr.allocate(size=4096, stream=stream),
                mr.allocate(256), mr.allocate(np.int64(64), stream=stream)):
        assert buf.ptr and not buf.is_closed and buf.device.ordinal == 0
        buf.close()
        assert buf.is_closed
        buf.close()  # closing twice is harmless
        with pytest.raises(ValueError, match="closed"):
            buf.ptr
    b = mr.allocate(1024, stream)
    b.close(stream=nanocuda.Stream(device=dev))  # freed in another stream's order
    b = mr.allocate(1024, stream)
    b.close(stream)
    with pytest.raises(ValueError, match="size must be >= 0"):
        mr.allocate(-1, stream)
    with pytest.raises(TypeError, match="size must be an int"):
        mr.allocate("1", stream)
    with pytest.raises(TypeError, match="missing required argument 'size'"):
        mr.allocate(stream=stream)
    with pytest.raises(TypeError, match="expected a stream"):
        mr.allocate(16, "s")
    pinned = nanocuda.PinnedMemoryResource().allocate(64, stream=stream)
    assert pinned.ptr
    pinned.close()
    stream.sync()


def test_launcher_required_dtype_and_contiguity(code):
    torch = pytest.importorskip("torch")
    from nanocuda import _nanocuda as ext
    from nanocuda import torch_ops

    a = torch.ones(1024, device="cuda")
    launcher = code.get_kernel("add").bind(nanocuda.LaunchConfig(grid=4, block=256),
                                           stream=torch_ops.stream(a))
    f32 = 2 | 32 << 8 | 1 << 16
    for i in range(3):
        ext._internal.launcher_require(launcher, i, [f32], True)
    out = torch.empty_like(a)
    launcher(a, a, out, 1024)
    torch.cuda.synchronize()
    assert torch.equal(out, a + a)
    with pytest.raises(TypeError, match="parameter 1: the tensor's dtype"):
        launcher(a, a.half(), out, 1024)
    wide = torch.ones(1024, 2, device="cuda")
    with pytest.raises(ValueError, match="parameter 0: the tensor must be contiguous"):
        launcher(wide[:, 0], a, out, 1024)
    launcher(torch.ones(1, 1024, device="cuda")[0], a, out, 1024)  # size-1 dims: contiguous
    launcher(torch.empty(0, device="cuda"), a, out, 0)  # empty: contiguous


def test_torch_op_checks_in_the_launcher_keep_the_op_errors(code):
    torch = pytest.importorskip("torch")
    from nanocuda import torch_ops

    add_out = torch_ops.op_from_kernel(
        code.get_kernel("add"), f"nc_perf_gpu{next(_count)}::add_out",
        "(Tensor a, Tensor b, Tensor(a!) out) -> ()", grid=lambda a, b, out: (a.numel() + 255) // 256,
        block=256, args=lambda a, b, out: (a, b, out, a.numel()), dtypes="float32")
    a, b = torch.rand(4096, device="cuda"), torch.rand(4096, device="cuda")
    out = torch.empty_like(a)
    add_out(a, b, out)
    assert add_out._launch_checked == {"a", "b", "out"}
    assert ".is_contiguous()" not in type(add_out)._fast_source
    add_out(b, a, out)
    torch.cuda.synchronize()
    assert torch.equal(out, a + b)
    with pytest.raises(TypeError, match="argument 'b' is a .*compiled for torch.float32"):
        add_out(a, b.double(), out)
    with pytest.raises(ValueError, match="argument 'a' must be contiguous"):
        add_out(torch.rand(4096, 2, device="cuda")[:, 0], b, out)
    with pytest.raises(ValueError, match="CUDA tensor"):
        add_out(a.cpu(), b, out)
    torch.library.opcheck(add_out.default, (a, b, out))
