"""cuda.core's compile surface on a GPU: get_kernel, attributes, occupancy, arguments_info, linked kernels."""

import numpy as np
import pytest

import nanocuda
from nanocuda import LaunchConfig, Linker, LinkerOptions, ObjectCode, Program, ProgramOptions, launch

pytestmark = pytest.mark.gpu

CODE = r"""
template<typename T>
__global__ void vector_add(const T* A, const T* B, T* C, size_t N) {
    const unsigned int tid = threadIdx.x + blockIdx.x * blockDim.x;
    for (size_t i = tid; i < N; i += gridDim.x * blockDim.x) {
        C[i] = A[i] + B[i];
    }
}
"""


def arch() -> str:
    return f"sm_{nanocuda.Device(0).target_arch}"


def run_vector_add(kernel, n=1000):
    stream = nanocuda.Stream()
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 2.0, dtype=np.float32)
    da, db, dc = (nanocuda.Buffer(4 * n, stream=stream) for _ in range(3))
    nanocuda.copy(da, a, stream=stream)
    nanocuda.copy(db, b, stream=stream)
    launch(stream, LaunchConfig(grid=(n + 255) // 256, block=256), kernel, da, db, dc, np.uint64(n))
    out = np.empty_like(a)
    nanocuda.copy(out, dc, stream=stream)
    stream.sync()
    np.testing.assert_allclose(out, a + b)


def test_get_kernel_by_name_expression_or_lowered_name():
    mod = Program(CODE, code_type="c++", options=ProgramOptions(std="c++17", arch=arch())).compile(
        "cubin", name_expressions=("vector_add<float>",))
    by_expr = mod.get_kernel("vector_add<float>")
    by_lowered = mod.get_kernel(mod.symbol_mapping["vector_add<float>"])
    by_bytes = mod.get_kernel(b"vector_add<float>")
    assert by_expr.name == by_lowered.name == by_bytes.name == "_Z10vector_addIfEvPKT_S2_PS0_m"
    run_vector_add(by_expr)


def test_kernel_attributes_with_cuda_core_names():
    ker = Program(CODE, "c++", ProgramOptions(arch=arch(), max_register_count=32)).compile(
        "cubin", name_expressions=["vector_add<float>"]).get_kernel("vector_add<float>")
    attrs = ker.attributes
    assert 0 < attrs.num_regs <= 32 and attrs.num_regs == attrs.num_registers
    assert attrs.max_threads_per_block >= 256
    assert attrs.shared_size_bytes == 0 and attrs.local_size_bytes == 0
    assert attrs.const_size_bytes >= 0
    assert attrs.ptx_version >= 90 and attrs.binary_version >= 90
    assert attrs.cache_mode_ca in (True, False)
    assert attrs.max_dynamic_shared_size_bytes >= 0
    assert attrs.preferred_shared_memory_carveout >= -1
    assert attrs.cluster_size_must_be_set is False
    assert attrs.required_cluster_width == 0
    assert attrs.non_portable_cluster_size_allowed in (True, False)
    assert attrs.cluster_scheduling_policy_preference >= 0
    assert ker.get_attributes(nanocuda.Device(0)).num_regs == attrs.num_regs


def test_kernel_arguments_info():
    ker = Program(CODE, "c++", ProgramOptions(arch=arch())).compile(
        "cubin", name_expressions=["vector_add<float>"]).get_kernel("vector_add<float>")
    assert ker.num_arguments == 4
    info = ker.arguments_info
    assert [(p.offset, p.size) for p in info] == [(0, 8), (8, 8), (16, 8), (24, 8)]
    assert info[3].offset == 24 and info[3].size == 8
    scalars = Program('extern "C" __global__ void k(char c, int i, double d, short s) {}', "c++",
                      ProgramOptions(arch=arch())).compile("cubin").get_kernel("k")
    assert [tuple(p) for p in scalars.arguments_info] == [(0, 1), (4, 4), (8, 8), (16, 2)]


def test_kernel_occupancy_with_cuda_core_signatures():
    ker = Program(CODE, "c++", ProgramOptions(arch=arch())).compile(
        "cubin", name_expressions=["vector_add<float>"]).get_kernel("vector_add<float>")
    occ = ker.occupancy
    blocks = occ.max_active_blocks_per_multiprocessor(256, 0)
    assert blocks > 0
    assert occ.max_active_blocks_per_multiprocessor(256) == blocks
    assert occ.max_active_blocks_per_multiprocessor(256, dynamic_shared_memory=0) == blocks
    result = occ.max_potential_block_size(0, 0)
    assert result.min_grid_size > 0 and 0 < result.max_block_size <= 1024
    min_grid, block = occ.max_potential_block_size()  # nanocuda's form: a tuple
    assert (min_grid, block) == (result.min_grid_size, result.max_block_size)
    limited = occ.max_potential_block_size(0, 128)
    assert limited.max_block_size <= 128
    smem = occ.available_dynamic_shared_memory_per_block(1, 256)
    assert smem >= 48 * 1024
    assert occ.available_dynamic_shared_memory_per_block(blocks, 256) <= smem
    stream = nanocuda.Stream()
    config = LaunchConfig(grid=16, block=128)
    assert occ.max_potential_cluster_size(config, stream=stream) >= 8
    clustered = LaunchConfig(grid=16, block=128, cluster=2)
    assert occ.max_active_clusters(clustered, stream=stream) > 0
    assert occ.max_active_clusters((16, 1, 1), (128, 1, 1), (2, 1, 1)) > 0  # nanocuda's form
    assert occ.max_active_clusters(config, stream=stream) > 0  # no cluster shape: clusters of one block
    with pytest.raises(TypeError, match=r"keyword-only argument: 'stream'"):
        occ.max_active_clusters(clustered)
    with pytest.raises(TypeError, match=r"keyword-only argument: 'stream'"):
        occ.max_potential_cluster_size(config)
    with pytest.raises(TypeError, match=r"the dynamic shared memory is a number of bytes"):
        occ.max_potential_block_size(..., 0)
    with pytest.raises(TypeError, match=r"callable is not supported"):
        occ.max_potential_block_size(lambda block_size: 0, 0)


def test_launch_linked_ltoir_kernel():
    opts = ProgramOptions(arch=arch(), relocatable_device_code=True, link_time_optimization=True)
    helper = Program('extern "C" __device__ float add(float a, float b) { return a + b; }', "c++", opts)
    main = Program('extern "C" __device__ float add(float, float);\n'
                   'extern "C" __global__ void vadd(const float* A, const float* B, float* C, size_t N) {\n'
                   '  size_t i = threadIdx.x + blockIdx.x * (size_t)blockDim.x;\n'
                   '  if (i < N) C[i] = add(A[i], B[i]);\n'
                   '}', "c++", opts)
    linker = Linker(helper.compile("ltoir"), main.compile("ltoir"),
                    options=LinkerOptions(arch=arch(), link_time_optimization=True))
    mod = linker.link("cubin")
    run_vector_add(mod.get_kernel("vadd"))
    # The linked cubin loads again from its bytes, as a cuda.core user would cache it.
    run_vector_add(ObjectCode.from_cubin(mod.code).get_kernel("vadd"))


def test_launch_from_ptx_program_and_linked_ptx():
    ptx = Program(CODE, "c++", ProgramOptions(arch=arch())).compile("ptx", name_expressions=["vector_add<float>"])
    run_vector_add(ObjectCode.from_ptx(ptx.code, symbol_mapping=ptx.symbol_mapping).get_kernel("vector_add<float>"))
    cubin = Program(ptx.code.decode(), code_type="ptx", options=ProgramOptions(arch=arch())).compile("cubin")
    run_vector_add(cubin.get_kernel(ptx.symbol_mapping["vector_add<float>"]))


def test_nvvm_kernel_runs():
    try:
        nanocuda._nanocuda._internal.nvvm_library()
    except nanocuda.ToolkitNotFoundError as e:
        pytest.skip(f"no libNVVM: {e}")
    from test_cuda_core_compile import NVVM_IR

    mod = Program(NVVM_IR, code_type="nvvm", options=ProgramOptions(arch=arch())).compile("cubin")
    stream = nanocuda.Stream()
    x = np.arange(32, dtype=np.float32)
    dx = nanocuda.Buffer(x.nbytes, stream=stream)
    nanocuda.copy(dx, x, stream=stream)
    launch(stream, LaunchConfig(grid=1, block=32), mod.get_kernel("scale"), dx)
    out = np.empty_like(x)
    nanocuda.copy(out, dx, stream=stream)
    stream.sync()
    np.testing.assert_allclose(out, 2 * x)
