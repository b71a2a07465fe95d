import cupy as cp
from nanocuda import Device, LaunchConfig, Program, ProgramOptions, launch

# 1. CUDA C++ kernel (templated for flexibility)
code = """
template<typename T>
__global__ void vector_add(const T* A, const T* B, T* C, size_t N) {
    const unsigned int tid = threadIdx.x + blockIdx.x * blockDim.x;
    for (size_t i = tid; i < N; i += gridDim.x * blockDim.x) {
        C[i] = A[i] + B[i];
    }
}
"""

# 2. Initialize device
dev = Device()
dev.set_current()
s = dev.create_stream()

# 3. Compile kernel
prog = Program(code, code_type="c++", 
               options=ProgramOptions(std="c++17", arch=f"sm_{dev.arch}"))
mod = prog.compile("cubin", name_expressions=("vector_add<float>",))
ker = mod.get_kernel("vector_add<float>")

# 4. Prepare data
size = 50000
a = cp.random.default_rng().random(size, dtype=cp.float32)
b = cp.random.default_rng().random(size, dtype=cp.float32)
c = cp.empty_like(a)
dev.sync()  # Sync before cross-stream access

# 5. Launch
config = LaunchConfig(grid=(size + 255) // 256, block=256)
launch(s, config, ker, a.data.ptr, b.data.ptr, c.data.ptr, cp.uint64(size))
s.sync()

# 6. Verify
assert cp.allclose(c, a + b)
print("done!")
