// `nanocuda bench saxpy`'s C++ side: the CUDA Python overview's SAXPY application in C++.
//
// Built at bench time with nvcc and called through ctypes. It loads the cubin nanocuda
// compiled from examples/kernels/saxpy.cu, so both sides run the same kernel. One
// "application" is what the overview times: copy x and y to the device, launch, copy out
// back, synchronize; the kernel alone is timed with events around the launch.
#include <cuda.h>

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace {
CUmodule g_module = nullptr;
CUfunction g_function = nullptr;
CUdeviceptr g_x = 0, g_y = 0, g_out = 0;
CUevent g_start = nullptr, g_stop = nullptr;
}  // namespace

extern "C" {

// Loads the cubin in device 0's primary context and allocates the three n-float buffers.
int saxpy_setup(const void* cubin, std::size_t n) {
  CUresult r = cuInit(0);
  CUdevice dev;
  CUcontext ctx;
  if (r == CUDA_SUCCESS) r = cuDeviceGet(&dev, 0);
  if (r == CUDA_SUCCESS) r = cuDevicePrimaryCtxRetain(&ctx, dev);
  if (r == CUDA_SUCCESS) r = cuCtxSetCurrent(ctx);
  if (r == CUDA_SUCCESS) r = cuModuleLoadData(&g_module, cubin);
  if (r == CUDA_SUCCESS) r = cuModuleGetFunction(&g_function, g_module, "saxpy");
  if (r == CUDA_SUCCESS) r = cuMemAlloc(&g_x, n * sizeof(float));
  if (r == CUDA_SUCCESS) r = cuMemAlloc(&g_y, n * sizeof(float));
  if (r == CUDA_SUCCESS) r = cuMemAlloc(&g_out, n * sizeof(float));
  if (r == CUDA_SUCCESS) r = cuEventCreate(&g_start, CU_EVENT_DEFAULT);
  if (r == CUDA_SUCCESS) r = cuEventCreate(&g_stop, CU_EVENT_DEFAULT);
  return static_cast<int>(r);
}

// One application run on `stream`; writes its wall time (ns) and the kernel's time (ms).
int saxpy_app(std::uint64_t stream_handle, float a, const float* x, const float* y, float* out,
              std::size_t n, unsigned blocks, unsigned threads, std::int64_t* app_ns,
              float* kernel_ms) {
  CUstream stream = reinterpret_cast<CUstream>(stream_handle);
  const std::size_t bytes = n * sizeof(float);
  auto t0 = std::chrono::steady_clock::now();
  CUresult r = cuMemcpyHtoDAsync(g_x, x, bytes, stream);
  if (r == CUDA_SUCCESS) r = cuMemcpyHtoDAsync(g_y, y, bytes, stream);
  void* params[] = {&a, &g_x, &g_y, &g_out, &n};
  if (r == CUDA_SUCCESS) r = cuEventRecord(g_start, stream);
  if (r == CUDA_SUCCESS)
    r = cuLaunchKernel(g_function, blocks, 1, 1, threads, 1, 1, 0, stream, params, nullptr);
  if (r == CUDA_SUCCESS) r = cuEventRecord(g_stop, stream);
  if (r == CUDA_SUCCESS) r = cuMemcpyDtoHAsync(out, g_out, bytes, stream);
  if (r == CUDA_SUCCESS) r = cuStreamSynchronize(stream);
  auto t1 = std::chrono::steady_clock::now();
  if (r == CUDA_SUCCESS) r = cuEventElapsedTime(kernel_ms, g_start, g_stop);
  *app_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
  return static_cast<int>(r);
}

void saxpy_teardown() {
  if (g_x) cuMemFree(g_x);
  if (g_y) cuMemFree(g_y);
  if (g_out) cuMemFree(g_out);
  if (g_start) cuEventDestroy(g_start);
  if (g_stop) cuEventDestroy(g_stop);
  if (g_module) cuModuleUnload(g_module);
  g_x = g_y = g_out = 0;
  g_start = g_stop = nullptr;
  g_module = nullptr;
}

}  // extern "C"
