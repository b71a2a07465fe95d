// Test kernels for TensorMap: TMA-load one box per block into shared memory, store it back
// through a second map, and optionally dump the raw shared-memory tile; plus an im2col load.
#include "nanocuda/device/tma.cuh"

using namespace nanocuda::tma;

// Shared memory, 1024-byte aligned as 128B swizzle requires (the shared window is aligned).
__device__ __forceinline__ unsigned char* aligned_tile(unsigned char* base) {
  return base + ((1024u - (smem_addr(base) & 1023u)) & 1023u);
}

// tiles*/box*: tile counts and box sizes, innermost first; bytes: the full box in bytes.
extern "C" __global__ void tma_roundtrip(const __grid_constant__ CUtensorMap src,
                                         const __grid_constant__ CUtensorMap dst, int rank,
                                         int t0, int t1, int t2, int t3, int t4, int b0, int b1,
                                         int b2, int b3, int b4, unsigned bytes,
                                         unsigned char* raw_out) {
  extern __shared__ unsigned char smem[];
  __shared__ alignas(8) unsigned long long bar;
  unsigned char* tile = aligned_tile(smem);
  const int tiles[5] = {t0, t1, t2, t3, t4};
  const int box[5] = {b0, b1, b2, b3, b4};
  int c[5] = {0, 0, 0, 0, 0};
  int t = blockIdx.x;
  for (int i = 0; i < rank; ++i) {
    c[i] = (t % tiles[i]) * box[i];
    t /= tiles[i];
  }
  if (threadIdx.x == 0) {
    prefetch_tensormap(&src);
    mbarrier_init(&bar, 1);
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&bar, bytes);
    switch (rank) {
      case 1: load_tile(&src, tile, &bar, c[0]); break;
      case 2: load_tile(&src, tile, &bar, c[0], c[1]); break;
      case 3: load_tile(&src, tile, &bar, c[0], c[1], c[2]); break;
      case 4: load_tile(&src, tile, &bar, c[0], c[1], c[2], c[3]); break;
      default: load_tile(&src, tile, &bar, c[0], c[1], c[2], c[3], c[4]); break;
    }
  }
  mbarrier_wait(&bar, 0);
  if (raw_out)
    for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x)
      raw_out[static_cast<unsigned long long>(blockIdx.x) * bytes + i] = tile[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    fence_proxy_async_shared();
    switch (rank) {
      case 1: store_tile(&dst, tile, c[0]); break;
      case 2: store_tile(&dst, tile, c[0], c[1]); break;
      case 3: store_tile(&dst, tile, c[0], c[1], c[2]); break;
      case 4: store_tile(&dst, tile, c[0], c[1], c[2], c[3]); break;
      default: store_tile(&dst, tile, c[0], c[1], c[2], c[3], c[4]); break;
    }
    store_commit();
    store_wait<0>();
  }
}

// One im2col load of an NHWC tensor starting at pixel (n, h, w), channel c; raw tile out.
extern "C" __global__ void tma_im2col_load(const __grid_constant__ CUtensorMap src, int c, int w,
                                           int h, int n, unsigned short off_w,
                                           unsigned short off_h, unsigned bytes,
                                           unsigned char* raw_out) {
  extern __shared__ unsigned char smem[];
  __shared__ alignas(8) unsigned long long bar;
  unsigned char* tile = aligned_tile(smem);
  if (threadIdx.x == 0) {
    mbarrier_init(&bar, 1);
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&bar, bytes);
    load_im2col(&src, tile, &bar, c, w, h, n, off_w, off_h);
  }
  mbarrier_wait(&bar, 0);
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) raw_out[i] = tile[i];
}
