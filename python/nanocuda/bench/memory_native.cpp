// `nanocuda bench memory`'s C++ side: the same operations as the Python rows, in C++ loops.
//
// Built at bench time with nvcc (-shared -fPIC -lcuda) and called through ctypes. Each
// function runs a burst in the caller's current context setup (device 0's primary context
// for allocations, the stream's for copies) and returns nanoseconds (negative: a CUresult).
#include <cuda.h>

#include <chrono>
#include <cstdint>

namespace {
std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

extern "C" {

// The primary context of device `ordinal` (the one nanocuda, torch and cuda.core share).
std::uint64_t mem_primary_context(int ordinal) {
  CUdevice dev;
  CUcontext ctx = nullptr;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS)
    return 0;
  return reinterpret_cast<std::uint64_t>(ctx);
}

// Makes `ctx` current on this thread (the context nanocuda's stream lives in).
int mem_set_context(std::uint64_t ctx) { return cuCtxSetCurrent(reinterpret_cast<CUcontext>(ctx)); }

// `count` stream-ordered allocate+free pairs of `size` bytes from `pool` on `stream`.
std::int64_t mem_alloc_free(std::uint64_t pool, std::uint64_t stream, std::size_t size, int count) {
  auto s = reinterpret_cast<CUstream>(stream);
  auto p = reinterpret_cast<CUmemoryPool>(pool);
  std::int64_t t0 = now_ns();
  for (int i = 0; i < count; ++i) {
    CUdeviceptr ptr = 0;
    if (CUresult r = cuMemAllocFromPoolAsync(&ptr, size, p, s); r != CUDA_SUCCESS) return -r;
    if (CUresult r = cuMemFreeAsync(ptr, s); r != CUDA_SUCCESS) return -r;
  }
  return now_ns() - t0;
}

// `count` copies of `size` bytes then a stream sync: cuMemcpyPeerAsync when both contexts
// are given, else cuMemcpyAsync (host<->device through unified addressing).
std::int64_t mem_copy(std::uint64_t dst, std::uint64_t dst_ctx, std::uint64_t src, std::uint64_t src_ctx,
                      std::size_t size, std::uint64_t stream, int count) {
  auto s = reinterpret_cast<CUstream>(stream);
  std::int64_t t0 = now_ns();
  for (int i = 0; i < count; ++i) {
    CUresult r = dst_ctx && src_ctx
                     ? cuMemcpyPeerAsync(dst, reinterpret_cast<CUcontext>(dst_ctx), src,
                                         reinterpret_cast<CUcontext>(src_ctx), size, s)
                     : cuMemcpyAsync(dst, src, size, s);
    if (r != CUDA_SUCCESS) return -r;
  }
  if (CUresult r = cuStreamSynchronize(s); r != CUDA_SUCCESS) return -r;
  return now_ns() - t0;
}

}  // extern "C"
