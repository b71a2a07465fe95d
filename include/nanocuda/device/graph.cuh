// Kernel-side CUDA graph helpers: set a conditional node's value from device code, under
// NVRTC and nvcc alike. Header-only; includes nothing, so NVRTC needs no include paths.
//
// The handle comes from GraphBuilder.create_conditional_handle() and is passed to the kernel
// as a 64-bit argument:
//   #include "nanocuda/device/graph.cuh"
//   extern "C" __global__ void step(nanocuda::conditional_handle h, int* counter, int n) {
//     if (threadIdx.x == 0 && blockIdx.x == 0)
//       nanocuda::set_conditional(h, ++*counter < n);  // 0 ends a while_loop
//   }
//
// Why this works without the device runtime library: cudaGraphSetConditional is a driver
// builtin. The compiler emits a call to an external function of that name, ptxas leaves an
// unresolved symbol that the driver binds when it loads the module (no -rdc, no cudadevrt),
// so NVRTC code needs only the declaration below. nvcc's runtime headers declare it already.
#pragma once

#if defined(__CUDACC_RTC__)
extern "C" __device__ void cudaGraphSetConditional(unsigned long long handle, unsigned int value);
#endif

namespace nanocuda {

// A CUgraphConditionalHandle (cudaGraphConditionalHandle): 64 bits, passed by value.
typedef unsigned long long conditional_handle;

// Sets the value the conditional node of `handle` reads next: for if/while, nonzero runs the
// body (a while_loop's body sets 0 to stop); for switch, the index of the body to run.
// Call it from one thread: concurrent calls race (undefined, per CUDA).
__device__ __forceinline__ void set_conditional(conditional_handle handle, unsigned int value) {
  cudaGraphSetConditional(handle, value);
}

}  // namespace nanocuda
