from nanocuda import Device, Program, ProgramOptions

# Define a templated CUDA C++ kernel
# Note: Templates let you defer dtype until compile time - no need to specify in advance
code = """
template<typename T>
__global__ void vector_add(const T* A, const T* B, T* C, size_t N) {
    const unsigned int tid = threadIdx.x + blockIdx.x * blockDim.x;
    for (size_t i = tid; i < N; i += gridDim.x * blockDim.x) {
        C[i] = A[i] + B[i];
    }
}
"""

dev = Device()
dev.set_current()

# Configure compilation options
# arch defaults to current device if not specified (see _program.py:310)
program_options = ProgramOptions(
    std="c++17",                    # C++ standard (c++03, c++11, c++14, c++17, c++20)
    arch=f"sm_{dev.arch}",          # Target architecture (e.g., "sm_89" for Ada Lovelace)
    # Other useful options:
    # debug=True,                   # Generate debug info (disables optimizations)
    # lineinfo=True,                # Generate line-number info (for profilers)
    # use_fast_math=True,           # Enable fast math operations
    # max_register_count=32,        # Limit register usage per thread
)

# Create program and compile to CUBIN
# code_type: "c++" (NVRTC), "ptx" (nvJitLink), "nvvm" (NVVM)
prog = Program(code, code_type="c++", options=program_options)

# Compile with explicit template instantiation via name_expressions
# This is REQUIRED for templates - tells NVRTC which instantiations to generate
mod = prog.compile(
    "cubin",                                    # target: "ptx", "cubin", or "ltoir"
    name_expressions=("vector_add<float>",),    # Template instantiations to compile
)

from nanocuda import LaunchConfig

# Retrieve the compiled kernel by its name expression
# Internally maps to the lowered/mangled name via symbol_mapping
ker = mod.get_kernel("vector_add<float>")

# Prepare input/output arrays (using CuPy for convenience)
import cupy as cp
size = 50000
rng = cp.random.default_rng()
a = rng.random(size, dtype=cp.float32)
b = rng.random(size, dtype=cp.float32)
c = cp.empty_like(a)

# CuPy uses its own stream - sync before we access from a different stream
dev.sync()

# Configure launch parameters
block = 256                           # Threads per block
grid = (size + block - 1) // block    # Number of blocks (ceiling division)

# LaunchConfig encapsulates grid/block dimensions and optional settings
config = LaunchConfig(
    grid=grid,                        # Can be int or tuple (x, y, z)
    block=block,                      # Can be int or tuple (x, y, z)
    # Optional parameters:
    # shmem_size=1024,                # Dynamic shared memory in bytes (default: 0)
    # cluster=(2, 1, 1),              # Thread Block Clusters (H100+, CC 9.0+)
    # cooperative_launch=True,        # For cooperative kernels
)

from nanocuda import launch

# Create a stream for our kernel execution
s = dev.create_stream()

# Launch kernel on stream with config and arguments
# Arguments are passed as *args after the kernel
launch(
    s,                      # Stream (or GraphBuilder for CUDA Graphs)
    config,                 # LaunchConfig
    ker,                    # Kernel object
    a.data.ptr,             # Kernel arg 1: pointer to array A
    b.data.ptr,             # Kernel arg 2: pointer to array B
    c.data.ptr,             # Kernel arg 3: pointer to array C
    cp.uint64(size),        # Kernel arg 4: array size (explicit type for safety)
)

# Wait for kernel completion
s.sync()

# Verify result
assert cp.allclose(c, a + b)
print("Success!")
