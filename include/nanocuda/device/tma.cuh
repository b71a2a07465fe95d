// Kernel-side TMA: CUtensorMap for NVRTC code without <cuda.h>, and PTX helpers for mbarriers
// and bulk tensor copies (sm_90+): tiled loads (also multicast to a cluster), im2col loads,
// tiled stores, L2 prefetch. Header-only; includes only mbarrier.cuh, so NVRTC needs no paths.
//
// A kernel takes a map built by nanocuda.TensorMap by value:
//   extern "C" __global__ void k(const __grid_constant__ CUtensorMap map) { ... &map ... }
// Coordinates in these helpers are innermost first (x is the contiguous dimension), as in
// PTX: the reverse of the row-major shape given to TensorMap on the host.
//
// If you also need <cuda.h>, include it before this header (it defines CUtensorMap itself;
// CU_TENSOR_MAP_NUM_QWORDS tells us it is there).
#pragma once

#ifndef CU_TENSOR_MAP_NUM_QWORDS
#define CU_TENSOR_MAP_NUM_QWORDS 16
// The same layout as cuda.h's of the compiling toolkit (CUDA 13 aligns it to 128, 12 to
// 64), so kernels compiled with or without <cuda.h> have the same parameter layout.
#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 13
#define NANOCUDA_TENSOR_MAP_ALIGN 128
#else
#define NANOCUDA_TENSOR_MAP_ALIGN 64
#endif
typedef struct CUtensorMap_st {
  alignas(NANOCUDA_TENSOR_MAP_ALIGN) unsigned long long opaque[CU_TENSOR_MAP_NUM_QWORDS];
} CUtensorMap;
#undef NANOCUDA_TENSOR_MAP_ALIGN
#endif

#include "mbarrier.cuh"

static_assert(sizeof(CUtensorMap) == 128, "a CUtensorMap is 128 bytes");
static_assert(alignof(CUtensorMap) >= 64, "TMA descriptors need 64-byte alignment");

namespace nanocuda {
namespace tma {

using nanocuda::smem_addr;

__device__ __forceinline__ unsigned long long map_addr(const CUtensorMap* map) {
  return reinterpret_cast<unsigned long long>(map);
}

// ---- mbarriers: the short names used with TMA (mbarrier.cuh has the full set) -------------

__device__ __forceinline__ void mbarrier_init(unsigned long long* bar, unsigned arrivals) {
  mbar::init(bar, arrivals);
}
// Makes mbarrier_init visible to the async proxy (TMA) and the rest of the cluster.
__device__ __forceinline__ void fence_barrier_init() { mbar::fence_init(); }
// Arrives once and tells the barrier to expect `bytes` more from TMA in this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  mbar::arrive_expect_tx(bar, bytes);
}
__device__ __forceinline__ void mbarrier_arrive(unsigned long long* bar) { mbar::arrive(bar); }
// Blocks until the phase with parity `phase` (0, 1, 0, ...) has completed.
__device__ __forceinline__ void mbarrier_wait(unsigned long long* bar, unsigned phase) {
  mbar::wait(bar, phase);
}

// Orders this thread's generic-proxy shared-memory writes before later TMA reads of them
// (call before store_tile of data written with ordinary stores).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---- descriptor prefetch -------------------------------------------------------------------

// Brings the descriptor into the cache ahead of first use (pass &map of a grid-constant param).
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map_addr(map)) : "memory");
}

// ---- tiled loads: global -> shared, completion signalled on `bar` ----------------------------
// dst must be 128-byte aligned (1024 for 128B swizzle); the box's bytes count toward `bar`.

#define NANOCUDA_TMA_LOAD(N, COORDS, ...)                                                        \
  asm volatile("cp.async.bulk.tensor." #N "d.shared::cluster.global.tile"                        \
               ".mbarrier::complete_tx::bytes [%0], [%1, {" COORDS "}], [%2];" ::"r"(smem_addr(dst)), \
               "l"(map_addr(map)), "r"(smem_addr(bar)), __VA_ARGS__                               \
               : "memory")

__device__ __forceinline__ void load_tile(const CUtensorMap* map, void* dst, unsigned long long* bar,
                                          int x) {
  NANOCUDA_TMA_LOAD(1, "%3", "r"(x));
}
__device__ __forceinline__ void load_tile(const CUtensorMap* map, void* dst, unsigned long long* bar,
                                          int x, int y) {
  NANOCUDA_TMA_LOAD(2, "%3, %4", "r"(x), "r"(y));
}
__device__ __forceinline__ void load_tile(const CUtensorMap* map, void* dst, unsigned long long* bar,
                                          int x, int y, int z) {
  NANOCUDA_TMA_LOAD(3, "%3, %4, %5", "r"(x), "r"(y), "r"(z));
}
__device__ __forceinline__ void load_tile(const CUtensorMap* map, void* dst, unsigned long long* bar,
                                          int x, int y, int z, int w) {
  NANOCUDA_TMA_LOAD(4, "%3, %4, %5, %6", "r"(x), "r"(y), "r"(z), "r"(w));
}
__device__ __forceinline__ void load_tile(const CUtensorMap* map, void* dst, unsigned long long* bar,
                                          int x, int y, int z, int w, int v) {
  NANOCUDA_TMA_LOAD(5, "%3, %4, %5, %6, %7", "r"(x), "r"(y), "r"(z), "r"(w), "r"(v));
}
#undef NANOCUDA_TMA_LOAD

// ---- multicast tiled loads: one copy lands in every block of `mask` (bit i: cluster rank i)
// at the same shared-memory offset, and completes bytes on each one's barrier at `bar`'s
// offset. Each receiving block must expect_tx the bytes on its own barrier.

__device__ __forceinline__ void load_tile_multicast(const CUtensorMap* map, void* dst,
                                                    unsigned long long* bar, unsigned short mask,
                                                    int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_addr(dst)),
               "l"(map_addr(map)), "r"(smem_addr(bar)), "r"(x), "r"(y), "h"(mask)
               : "memory");
}
__device__ __forceinline__ void load_tile_multicast(const CUtensorMap* map, void* dst,
                                                    unsigned long long* bar, unsigned short mask,
                                                    int x, int y, int z) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;" ::"r"(smem_addr(dst)),
               "l"(map_addr(map)), "r"(smem_addr(bar)), "r"(x), "r"(y), "r"(z), "h"(mask)
               : "memory");
}

// ---- im2col loads: coordinates {c, w, (h,) (d,) n}, offsets {w, (h,) (d)} (16-bit) ---------

#define NANOCUDA_TMA_IM2COL(N, COORDS, OFFS, ...)                                                \
  asm volatile("cp.async.bulk.tensor." #N "d.shared::cluster.global.im2col"                      \
               ".mbarrier::complete_tx::bytes [%0], [%1, {" COORDS "}], [%2], {" OFFS "};"        \
               ::"r"(smem_addr(dst)), "l"(map_addr(map)), "r"(smem_addr(bar)), __VA_ARGS__        \
               : "memory")

__device__ __forceinline__ void load_im2col(const CUtensorMap* map, void* dst,
                                            unsigned long long* bar, int c, int w, int n,
                                            unsigned short off_w) {
  NANOCUDA_TMA_IM2COL(3, "%3, %4, %5", "%6", "r"(c), "r"(w), "r"(n), "h"(off_w));
}
__device__ __forceinline__ void load_im2col(const CUtensorMap* map, void* dst,
                                            unsigned long long* bar, int c, int w, int h, int n,
                                            unsigned short off_w, unsigned short off_h) {
  NANOCUDA_TMA_IM2COL(4, "%3, %4, %5, %6", "%7, %8", "r"(c), "r"(w), "r"(h), "r"(n), "h"(off_w),
                      "h"(off_h));
}
__device__ __forceinline__ void load_im2col(const CUtensorMap* map, void* dst,
                                            unsigned long long* bar, int c, int w, int h, int d,
                                            int n, unsigned short off_w, unsigned short off_h,
                                            unsigned short off_d) {
  NANOCUDA_TMA_IM2COL(5, "%3, %4, %5, %6, %7", "%8, %9, %10", "r"(c), "r"(w), "r"(h), "r"(d),
                      "r"(n), "h"(off_w), "h"(off_h), "h"(off_d));
}
#undef NANOCUDA_TMA_IM2COL

// ---- tiled stores: shared -> global, tracked by bulk groups ---------------------------------
// Out-of-bounds parts of the box are not written.

#define NANOCUDA_TMA_STORE(N, COORDS, ...)                                                       \
  asm volatile("cp.async.bulk.tensor." #N "d.global.shared::cta.bulk_group [%0, {" COORDS "}], [%1];" \
               ::"l"(map_addr(map)), "r"(smem_addr(src)), __VA_ARGS__                             \
               : "memory")

__device__ __forceinline__ void store_tile(const CUtensorMap* map, const void* src, int x) {
  NANOCUDA_TMA_STORE(1, "%2", "r"(x));
}
__device__ __forceinline__ void store_tile(const CUtensorMap* map, const void* src, int x, int y) {
  NANOCUDA_TMA_STORE(2, "%2, %3", "r"(x), "r"(y));
}
__device__ __forceinline__ void store_tile(const CUtensorMap* map, const void* src, int x, int y,
                                           int z) {
  NANOCUDA_TMA_STORE(3, "%2, %3, %4", "r"(x), "r"(y), "r"(z));
}
__device__ __forceinline__ void store_tile(const CUtensorMap* map, const void* src, int x, int y,
                                           int z, int w) {
  NANOCUDA_TMA_STORE(4, "%2, %3, %4, %5", "r"(x), "r"(y), "r"(z), "r"(w));
}
__device__ __forceinline__ void store_tile(const CUtensorMap* map, const void* src, int x, int y,
                                           int z, int w, int v) {
  NANOCUDA_TMA_STORE(5, "%2, %3, %4, %5, %6", "r"(x), "r"(y), "r"(z), "r"(w), "r"(v));
}
#undef NANOCUDA_TMA_STORE

// Closes the current bulk group of stores.
__device__ __forceinline__ void store_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Waits until at most N committed groups are still reading shared memory (smem reusable).
template <int N = 0>
__device__ __forceinline__ void store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// Waits until at most N committed groups are still pending (writes visible in global).
template <int N = 0>
__device__ __forceinline__ void store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// ---- L2 prefetch of a tile ----------------------------------------------------------------

__device__ __forceinline__ void prefetch_tile(const CUtensorMap* map, int x, int y) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(map_addr(map)),
               "r"(x), "r"(y)
               : "memory");
}

}  // namespace tma
}  // namespace nanocuda
