"""On a GPU: Program.compile(cache=), KernelAttributes[device], Kernel.from_handle, default-arch links."""

import warnings

import pytest

import nanocuda
from nanocuda import Device, Kernel, LaunchConfig, Linker, LinkerOptions, Program, ProgramOptions
from nanocuda.utils import FileStreamProgramCache, InMemoryProgramCache

pytestmark = pytest.mark.gpu

KERNEL = 'extern "C" __global__ void fill(int* p, int v) { p[threadIdx.x] = v; }'


def _plain_arch():
    major, minor = Device(0).compute_capability
    return f"sm_{major}{minor}"


def test_compile_with_a_file_cache_hits_and_the_hit_runs(tmp_path):
    program = Program(KERNEL, "c++", ProgramOptions(name="fill.cu"))
    with FileStreamProgramCache(tmp_path / "pc") as cache:
        first = program.compile("cubin", cache=cache)
        assert len(cache) == 1
    with FileStreamProgramCache(tmp_path / "pc") as cache:
        second = Program(KERNEL, "c++", ProgramOptions(name="fill.cu")).compile("cubin", cache=cache)
    assert bytes(second.code) == bytes(first.code) and second.name == "fill.cu"
    np = pytest.importorskip("numpy")
    stream = nanocuda.Stream()
    buf = nanocuda.Buffer(4 * 32, stream=stream)
    nanocuda.launch(stream, LaunchConfig(grid=1, block=32), second.get_kernel("fill"), buf, np.int32(7))
    out = np.zeros(32, dtype=np.int32)
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    assert (out == 7).all()


def test_attributes_per_device_view():
    k = Program(KERNEL, "c++").compile("cubin").get_kernel("fill")
    view, by_int, by_dev = k.attributes, k.attributes[0], k.attributes[Device(0)]
    assert view.num_regs == by_int.num_regs == by_dev.num_regs > 0
    assert by_int is not view and isinstance(by_dev.cache_mode_ca, bool)
    with pytest.raises(TypeError, match=r"KernelAttributes\[device\]"):
        k.attributes["not a device"]
    # Read live: a raised dynamic shared memory limit shows at once.
    k.set_max_dynamic_shared_memory(64 * 1024)
    assert view.max_dynamic_shared_size_bytes == 64 * 1024


def test_kernel_from_handle_with_and_without_its_code():
    code = Program(KERNEL, "c++").compile("cubin")
    k = code.get_kernel("fill")
    again = Kernel.from_handle(int(k.handle), code)
    assert int(again.handle) == int(k.handle) and again.attributes.max_threads_per_block > 0
    bare = Kernel.from_handle(int(k.handle))
    assert bare.name == "fill" and bare.num_arguments == 2


def test_kernel_from_handle_warns_when_mod_is_another_library():
    k = Program(KERNEL, "c++").compile("cubin").get_kernel("fill")
    other = Program(KERNEL + "\n// another library", "c++").compile("cubin")
    other.get_kernel("fill")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Kernel.from_handle(int(k.handle), other)
    assert any("does not match" in str(w.message) for w in seen)


def test_default_arch_ptx_links_for_the_plain_arch():
    a = 'extern __device__ int b(); __global__ void a(int* p) { *p = b(); }'
    b = '__device__ int b() { return 3; }'
    ptx = [Program(s, "c++", ProgramOptions(relocatable_device_code=True)).compile("ptx") for s in (a, b)]
    target = ptx[0].code.split(b".target")[1].split()[0]
    assert target == _plain_arch().encode()  # the device default without its "a" suffix
    linked = Linker(*ptx, options=LinkerOptions(arch=_plain_arch())).link("cubin")
    assert linked.code_type == "cubin"
    ltoir = [Program(s, "c++", ProgramOptions(link_time_optimization=True)).compile("ltoir") for s in (a, b)]
    assert Linker(*ltoir, options=LinkerOptions(arch=_plain_arch(), link_time_optimization=True)).link("cubin")


def test_cluster_queries_take_cuda_core_s_form():
    if Device(0).compute_capability < (9, 0):
        pytest.skip("clusters need sm_90")
    occ = Program(KERNEL, "c++").compile("cubin").get_kernel("fill").occupancy
    stream = nanocuda.Stream()
    assert occ.max_active_clusters(LaunchConfig(grid=128, block=64), stream=stream) >= 0
    with pytest.raises(TypeError, match="keyword-only argument"):
        occ.max_potential_cluster_size(LaunchConfig(grid=128, block=64))
    with pytest.raises(TypeError, match="number of bytes"):
        occ.max_potential_block_size(..., 0)


def test_block_size_callback_from_cuda_bindings():
    ctypes = pytest.importorskip("ctypes")
    driver = pytest.importorskip("cuda.bindings.driver")
    proto = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_int)
    fn = proto(lambda block: 16 * block)
    b2d = driver.CUoccupancyB2DSize(_ptr=ctypes.cast(fn, ctypes.c_void_p).value)
    occ = Program(KERNEL, "c++").compile("cubin").get_kernel("fill").occupancy
    grid, block = occ.max_potential_block_size(b2d, 256)
    assert grid > 0 and 0 < block <= 256


def test_in_memory_cache_miss_then_hit_with_a_real_compile():
    cache = InMemoryProgramCache()
    p = Program(KERNEL, "c++")
    first = p.compile("ptx", cache=cache)
    assert len(cache) == 1
    assert bytes(p.compile("ptx", cache=cache).code) == bytes(first.code)
