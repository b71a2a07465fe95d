// `nanocuda bench gemm`'s C++ side (seed 000's libwrapped_kernel.so): encode 3 TMA maps + launch.
//
// Built at bench time with nvcc (-shared -fPIC -lcuda) and called through ctypes, exactly
// like the seed's shared library. It loads the same cubin nanocuda compiled, so both sides
// run the same kernel; each call encodes A, B and C with cuTensorMapEncodeTiled (swizzle
// none, 64×64 boxes, as examples/kernels/hopper_gemm.cu expects) and calls cuLaunchKernel.
#include <cuda.h>

#include <chrono>
#include <cstdint>

namespace {

CUmodule g_module = nullptr;
CUfunction g_function = nullptr;

// A row-major fp16 matrix rows×cols, cut into 64×64 boxes (driver order: innermost first).
CUresult encode(CUtensorMap* map, std::uint64_t ptr, std::uint64_t rows, std::uint64_t cols) {
  cuuint64_t dims[2] = {cols, rows};
  cuuint64_t strides[1] = {cols * 2};
  cuuint32_t box[2] = {64, 64};
  cuuint32_t elem[2] = {1, 1};
  return cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, reinterpret_cast<void*>(ptr),
                                dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

}  // namespace

extern "C" {

// Loads `cubin` in device 0's primary context (the one nanocuda and torch use) and finds
// the kernel `name`. Returns a CUresult (0 = success).
int gemm_setup(const void* cubin, const char* name) {
  CUresult r = cuInit(0);
  CUdevice dev;
  CUcontext ctx;
  if (r == CUDA_SUCCESS) r = cuDeviceGet(&dev, 0);
  if (r == CUDA_SUCCESS) r = cuDevicePrimaryCtxRetain(&ctx, dev);
  if (r == CUDA_SUCCESS) r = cuCtxSetCurrent(ctx);
  if (r == CUDA_SUCCESS && g_module) r = cuModuleUnload(g_module);
  if (r == CUDA_SUCCESS) r = cuModuleLoadData(&g_module, cubin);
  if (r == CUDA_SUCCESS) r = cuModuleGetFunction(&g_function, g_module, name);
  return static_cast<int>(r);
}

// One GEMM C (M×N) = A (M×K) · B (N×K)ᵀ: three encodes and one launch, as the seed's
// wrapper does per call.
int gemm_call(std::uint64_t stream, std::uint64_t a, std::uint64_t b, std::uint64_t c, int m,
              int n, int k) {
  CUtensorMap ma, mb, mc;
  CUresult r = encode(&ma, a, m, k);
  if (r == CUDA_SUCCESS) r = encode(&mb, b, n, k);
  if (r == CUDA_SUCCESS) r = encode(&mc, c, m, n);
  if (r != CUDA_SUCCESS) return static_cast<int>(r);
  void* params[] = {&ma, &mb, &mc, &k};
  return static_cast<int>(cuLaunchKernel(g_function, (n + 63) / 64, (m + 63) / 64, 1, 128, 1, 1, 0,
                                         reinterpret_cast<CUstream>(stream), params, nullptr));
}

// `count` gemm_call()s in a native loop; writes the loop's CPU time in nanoseconds.
int gemm_loop(std::uint64_t stream, std::uint64_t a, std::uint64_t b, std::uint64_t c, int m, int n,
              int k, int count, std::int64_t* ns) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    int r = gemm_call(stream, a, b, c, m, n, k);
    if (r != 0) return r;
  }
  *ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();
  return 0;
}

}  // extern "C"
