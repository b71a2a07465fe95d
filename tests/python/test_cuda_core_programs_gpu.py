"""Whole cuda.core programs, each run twice: on nanocuda, and on cuda.core itself where it is
installed, with only the module changed. Each result is checked against numpy, and the two
runs must agree (so every program here is also proof that it is valid cuda.core code)."""

import importlib

import numpy as np
import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.needs_torch]


def modules():
    out = [importlib.import_module("nanocuda")]
    try:
        out.append(importlib.import_module("cuda.core"))
    except ImportError:
        print("cuda.core is not installed: each program runs on nanocuda only")
    return out


def run_everywhere(program):
    """{module name: results} of `program(module)` for nanocuda and (if installed) cuda.core."""
    return {cc.__name__: program(cc) for cc in modules()}


def assert_same(results):
    if "cuda.core" not in results:
        return
    ours, theirs = results["nanocuda"], results["cuda.core"]
    assert ours.keys() == theirs.keys()
    for key in ours:
        if isinstance(ours[key], np.ndarray):
            np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)
        else:
            assert ours[key] == theirs[key], (key, ours[key], theirs[key])


def setup(cc):
    dev = cc.Device()
    dev.set_current()
    return dev, dev.create_stream()


def kernel(cc, dev, source, name, **options):
    prog = cc.Program(source, code_type="c++",
                      options=cc.ProgramOptions(std="c++17", arch=f"sm_{dev.arch}", **options))
    return prog.compile("cubin", name_expressions=(name,) if "<" in name else ()).get_kernel(name)


def host_array(buffer, dtype):
    return np.from_dlpack(buffer).view(dtype)


def read_back(cc, buffer, stream, dtype):
    """A device Buffer's contents, copied through pinned memory once the stream gets there."""
    host = cc.LegacyPinnedMemoryResource().allocate(buffer.size, stream=stream)
    buffer.copy_to(host, stream=stream)
    stream.sync()
    return host_array(host, dtype).copy()


SAXPY = r"""
template <typename T>
__global__ void saxpy(const T a, const T* x, const T* y, T* out, size_t n) {
  for (size_t i = threadIdx.x + blockIdx.x * (size_t)blockDim.x; i < n; i += gridDim.x * (size_t)blockDim.x)
    out[i] = a * x[i] + y[i];
}
"""


def saxpy_program(cc):
    dev, s = setup(cc)
    prog = cc.Program(SAXPY, code_type="c++",
                      options=cc.ProgramOptions(std="c++17", arch=f"sm_{dev.arch}"))
    mod = prog.compile("cubin", name_expressions=("saxpy<float>", "saxpy<double>"))
    pinned = cc.LegacyPinnedMemoryResource()
    out = {}
    for T, name in ((np.float32, "saxpy<float>"), (np.float64, "saxpy<double>")):
        n = 1000
        nbytes = n * np.dtype(T).itemsize
        hx, hy, hout = (pinned.allocate(nbytes, stream=s) for _ in range(3))
        host_array(hx, T)[:] = np.arange(n)
        host_array(hy, T)[:] = 1
        dx, dy, dout = (dev.allocate(nbytes, stream=s) for _ in range(3))
        dx.copy_from(hx, stream=s)
        dy.copy_from(hy, stream=s)
        cc.launch(s, cc.LaunchConfig(grid=4, block=128), mod.get_kernel(name), T(2.5), dx, dy, dout,
                  np.uint64(n))
        dout.copy_to(hout, stream=s)
        s.sync()
        out[name] = host_array(hout, T).copy()
        for b in (dx, dy, dout, hx, hy, hout):
            b.close(s)
    return out


def test_saxpy_templates_buffers_and_pinned_memory():
    import nanocuda

    with pytest.raises(RuntimeError, match="not bound to any GPU"):
        nanocuda.LegacyPinnedMemoryResource().device_id
    results = run_everywhere(saxpy_program)
    for T, name in ((np.float32, "saxpy<float>"), (np.float64, "saxpy<double>")):
        np.testing.assert_array_equal(results["nanocuda"][name], (2.5 * np.arange(1000) + 1).astype(T))
    assert_same(results)


SCALE2D = r"""
extern "C" __global__ void scale2d(float* x, int rows, int cols, float f) {
  int r = blockIdx.y, c = threadIdx.x;
  if (r < rows && c < cols) x[r * cols + c] *= f;
}
"""


def views_program(cc):
    import torch

    utils = importlib.import_module(cc.__name__ + ".utils")
    dev, s = setup(cc)
    ker = kernel(cc, dev, SCALE2D, "scale2d")
    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    torch.cuda.synchronize()

    @utils.args_viewable_as_strided_memory((0,))
    def scale(arr, stream):
        view = arr.view(int(stream.handle))
        cc.launch(stream, cc.LaunchConfig(grid=(1, view.shape[0]), block=32), ker, view.ptr,
                  np.int32(view.shape[0]), np.int32(view.shape[1]), np.float32(3))
        return view

    view = scale(t, s)
    s.sync()
    tv = utils.StridedMemoryView.from_dlpack(t.T, stream_ptr=-1)
    return {"meta": (view.shape, dense_strides(view), str(view.dtype), view.device_id, view.is_device_accessible,
                     view.readonly, view.ptr == t.data_ptr()), "raw_strides": view.strides,
            "transposed": (tv.shape, tv.strides), "data": t.cpu().numpy()}


def test_strided_memory_views_of_torch_tensors():
    results = run_everywhere(views_program)
    ours = results["nanocuda"]
    assert ours["meta"] == ((3, 4), (4, 1), "float32", 0, True, False, True)
    assert ours["raw_strides"] == (4, 1)  # nanocuda always gives them (cuda.core 1.2 gives None)
    for r in results.values():
        r.pop("raw_strides")
    assert ours["transposed"] == ((4, 3), (1, 4))
    np.testing.assert_array_equal(ours["data"], 3 * np.arange(12, dtype=np.float32).reshape(3, 4))
    assert_same(results)


def dense_strides(view):
    """A view's strides in elements; cuda.core 1.2 says None for a C-contiguous view, which
    nanocuda (and newer cuda.core) spell out."""
    if view.strides is not None:
        return tuple(view.strides)
    out, step = [], 1
    for n in reversed(view.shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


def buffer_views_program(cc):
    utils = importlib.import_module(cc.__name__ + ".utils")
    dev, s = setup(cc)
    ker = kernel(cc, dev, SCALE2D, "scale2d")
    mr = cc.DeviceMemoryResource(dev)
    buf = mr.allocate(4 * 24, stream=s)
    dview = utils.StridedMemoryView.from_buffer(buf, (4, 6), dtype=np.dtype(np.float32))
    pinned = cc.LegacyPinnedMemoryResource().allocate(4 * 24, stream=s)
    host_array(pinned, np.float32)[:] = np.arange(24)
    buf.copy_from(pinned, stream=s)
    cc.launch(s, cc.LaunchConfig(grid=(1, 4), block=32), ker, dview.ptr, np.int32(4), np.int32(6), np.float32(-1))
    buf.copy_to(pinned, stream=s)
    s.sync()
    meta = (dview.shape, dense_strides(dview), str(dview.dtype), dview.device_id, dview.is_device_accessible,
            dview.ptr == int(buf.handle))
    buf.close(s)
    return {"meta": meta, "back": host_array(pinned, np.float32).reshape(4, 6).copy()}


def test_strided_memory_view_of_a_buffer():
    results = run_everywhere(buffer_views_program)
    ours = results["nanocuda"]
    assert ours["meta"] == ((4, 6), (6, 1), "float32", 0, True, True)
    np.testing.assert_array_equal(ours["back"], -np.arange(24, dtype=np.float32).reshape(4, 6))
    assert_same(results)


INC = r"""
extern "C" __global__ void inc(int* x, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n) x[i] += i;
}
"""


def graph_program(cc):
    dev, s = setup(cc)
    ker = kernel(cc, dev, INC, "inc")
    buf = dev.allocate(4 * 64, stream=s)
    buf.fill(0, stream=s)
    gb = s.create_graph_builder()
    gb.begin_building()
    for _ in range(3):
        cc.launch(gb, cc.LaunchConfig(grid=2, block=32), ker, buf, np.int32(64))
    graph = gb.end_building().complete()
    graph.upload(s)
    graph.launch(s)
    graph.launch(s)
    return {"x": read_back(cc, buf, s, np.int32)}


def test_graph_built_by_capture():
    results = run_everywhere(graph_program)
    np.testing.assert_array_equal(results["nanocuda"]["x"], 6 * np.arange(64, dtype=np.int32))
    assert_same(results)


CLUSTER = r"""
extern "C" __global__ void where(unsigned* out) {
  unsigned rank, size, id;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(id));
  if (threadIdx.x == 0) out[blockIdx.x] = id * 10000 + size * 100 + rank;
}
"""


def cluster_program(cc):
    dev, s = setup(cc)
    ker = kernel(cc, dev, CLUSTER, "where")
    buf = dev.allocate(4 * 8, stream=s)
    buf.fill(255, stream=s)
    # grid counts clusters when a cluster shape is given: 3 clusters of 2 blocks
    cc.launch(s, cc.LaunchConfig(grid=3, cluster=2, block=32), ker, buf)
    return {"out": read_back(cc, buf, s, np.uint32)}


def test_thread_block_clusters_grid_counts_clusters():
    results = run_everywhere(cluster_program)
    expect = [c * 10000 + 200 + r for c in range(3) for r in range(2)] + [0xFFFFFFFF] * 2
    assert results["nanocuda"]["out"].tolist() == expect
    assert_same(results)


USE = r"""
extern __device__ float transform(float x);
extern "C" __global__ void apply(float* x, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n) x[i] = transform(x[i]);
}
"""
DEFINE = r"""__device__ float transform(float x) { return 3.0f * x + 1.0f; }"""


def lto_program(cc):
    import torch

    dev, s = setup(cc)
    opts = cc.ProgramOptions(arch=f"sm_{dev.arch}", relocatable_device_code=True, link_time_optimization=True)
    objs = [cc.Program(src, code_type="c++", options=opts).compile("ltoir") for src in (USE, DEFINE)]
    linked = cc.Linker(*objs, options=cc.LinkerOptions(arch=f"sm_{dev.arch}", link_time_optimization=True))
    ker = linked.link("cubin").get_kernel("apply")
    x = torch.arange(100, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    cc.launch(s, cc.LaunchConfig(grid=1, block=128), ker, x.data_ptr(), np.int32(100))
    s.sync()
    return {"x": x.cpu().numpy()}


def test_link_time_optimized_program():
    results = run_everywhere(lto_program)
    np.testing.assert_array_equal(results["nanocuda"]["x"], 3 * np.arange(100, dtype=np.float32) + 1)
    assert_same(results)


PARAMS = r"""
extern "C" __global__ void params(float* x, int n, double d, char c) {
  if (threadIdx.x == 0 && n > 0) x[0] = (float)d + c;
}
"""


def introspection_program(cc):
    dev, s = setup(cc)
    ker = kernel(cc, dev, PARAMS, "params")
    occ = ker.occupancy
    start = s.record(options=cc.EventOptions(timing_enabled=True))
    buf = dev.allocate(4, stream=s)
    cc.launch(s, cc.LaunchConfig(grid=1, block=32), ker, buf, np.int32(1), np.float64(1.5), np.int8(2))
    end = s.record(options=cc.EventOptions(timing_enabled=True))
    end.sync()
    props = dev.properties
    return {
        "params": (ker.num_arguments, [(p.offset, p.size) for p in ker.arguments_info]),
        "attributes": (ker.attributes.max_threads_per_block, ker.attributes.num_regs,
                       ker.attributes.shared_size_bytes),
        "occupancy": (occ.max_active_blocks_per_multiprocessor(128, 0),
                      tuple(occ.max_potential_block_size(0, 0))),
        "device": (dev.device_id, tuple(dev.compute_capability), dev.arch, dev.name,
                   props.multiprocessor_count, props.max_shared_memory_per_block_optin,
                   props.warp_size, cc.system.get_num_devices()),
        "timed": (end - start) >= 0,
    }


def test_kernel_device_and_event_introspection():
    results = run_everywhere(introspection_program)
    ours = results["nanocuda"]
    assert ours["params"] == (4, [(0, 8), (8, 4), (16, 8), (24, 1)])
    assert ours["attributes"][0] >= 32 and ours["occupancy"][0] >= 1 and ours["timed"]
    assert_same(results)


TMA_DUMP = r"""
struct __align__(64) Descriptor { unsigned long long word[16]; };
extern "C" __global__ void dump(const __grid_constant__ Descriptor d, unsigned long long* out) {
  if (threadIdx.x < 16) out[threadIdx.x] = d.word[threadIdx.x];
}
"""


def tensor_map_program(cc):
    import torch

    utils = importlib.import_module(cc.__name__ + ".utils")
    dev, s = setup(cc)
    ker = kernel(cc, dev, TMA_DUMP, "dump")
    t = torch.randn(256, 128, device="cuda", dtype=torch.float16)
    view = utils.StridedMemoryView.from_dlpack(t, stream_ptr=-1)
    maps = {"box": view.as_tensor_map((64, 64)),
            "options": view.as_tensor_map(options=cc.TensorMapDescriptorOptions(box_dim=(32, 64)))}
    out = {}
    for key, tmap in maps.items():
        words = torch.zeros(16, dtype=torch.int64, device="cuda")
        torch.cuda.synchronize()
        cc.launch(s, cc.LaunchConfig(grid=1, block=32), ker, tmap, words.data_ptr())
        s.sync()
        out[key] = words.cpu().numpy()
    return out


def test_tensor_map_descriptors_are_byte_identical():
    results = run_everywhere(tensor_map_program)
    ours = results["nanocuda"]
    assert ours["box"].any() and not np.array_equal(ours["box"], ours["options"])
    assert_same(results)


def interop_program(cc):
    import torch

    dev, _ = setup(cc)
    ker = kernel(cc, dev, INC, "inc")
    torch_stream = torch.cuda.Stream()
    s = cc.Stream.from_handle(torch_stream.cuda_stream)  # borrowed: torch's stream
    t = torch.zeros(64, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    buf = cc.Buffer.from_handle(t.data_ptr(), t.numel() * 4)  # borrowed: torch's memory
    cc.launch(s, cc.LaunchConfig(grid=1, block=64), ker, buf, np.int32(64))
    other = dev.create_stream()
    other.wait(s.record())  # cross-stream order through an event
    cc.launch(other, cc.LaunchConfig(grid=1, block=64), ker, buf, np.int32(64))
    other.sync()
    exported = torch.from_dlpack(buf)
    return {"t": t.cpu().numpy(), "handle": int(s.handle) == torch_stream.cuda_stream,
            "dlpack": (tuple(exported.shape), str(exported.dtype), exported.data_ptr() == t.data_ptr()),
            "buffer": (buf.size, buf.device_id, buf.is_device_accessible, buf.is_host_accessible)}


def test_borrowed_torch_stream_and_memory():
    results = run_everywhere(interop_program)
    ours = results["nanocuda"]
    np.testing.assert_array_equal(ours["t"], 2 * np.arange(64, dtype=np.int32))
    assert ours["handle"] and ours["dlpack"][2] and ours["buffer"] == (256, 0, True, False)
    assert_same(results)
