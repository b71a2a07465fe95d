// Test kernels for the device headers (mbarrier, wgmma, warpgroup, cluster, multicast TMA,
// pdl): each exercises one header on the GPU and writes what it saw for the Python test.
#include "nanocuda/device/cluster.cuh"
#include "nanocuda/device/mbarrier.cuh"
#include "nanocuda/device/pdl.cuh"
#include "nanocuda/device/tma.cuh"
#include "nanocuda/device/warpgroup.cuh"
#include "nanocuda/device/wgmma.cuh"

using namespace nanocuda;

extern __shared__ unsigned char smem_raw[];  // dynamic shared memory of every kernel here

__device__ __forceinline__ unsigned char* align1024(unsigned char* base) {
  return base + ((1024u - (smem_addr(base) & 1023u)) & 1023u);
}

// One block of 128 threads. flags[0..1]: try_wait on parity 0 / 1 of a fresh barrier;
// flags[2 + p]: the phase parity each of 4 phases completed with (all threads arrive).
extern "C" __global__ void mbarrier_phases(int* flags) {
  __shared__ alignas(8) unsigned long long bar;
  if (threadIdx.x == 0) {
    mbar::init(&bar, blockDim.x);
    mbar::fence_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    flags[0] = mbar::try_wait(&bar, 0);  // phase 0 not complete: nobody arrived
    flags[1] = mbar::try_wait(&bar, 1);  // "the phase before" counts as complete
  }
  __syncthreads();
  for (int p = 0; p < 4; ++p) {
    mbar::arrive(&bar);
    mbar::wait(&bar, p & 1);
    if (threadIdx.x == 0) flags[2 + p] = (p & 1) + 10 * mbar::try_wait(&bar, p & 1);
    __syncthreads();  // nobody arrives on phase p+1 before thread 0 has looked at phase p
  }
}

// One warpgroup: D (64×N fp32, row-major) = A (64×64) · B, both loaded by TMA with 128B
// swizzle; B is N×64 (K-major, D = A·Bᵀ) or, with KN, 64×N (MN-major, N/64 boxes of [64][64]
// placed 8192 bytes apart, D = A·B). d starts as NaN and the first step uses scale_d = 0.
template <int N, wgmma::Type T, bool KN>
__device__ void wgmma_tile(const CUtensorMap& A, const CUtensorMap& B, float* D) {
  unsigned char* a = align1024(smem_raw);
  unsigned char* b = a + 64 * 64 * 2;
  __shared__ alignas(8) unsigned long long bar;
  if (threadIdx.x == 0) {
    mbar::init(&bar, 1);
    mbar::fence_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbar::arrive_expect_tx(&bar, (64 + N) * 64 * 2);
    tma::load_tile(&A, a, &bar, 0, 0);
    if constexpr (KN) {
      for (int j = 0; j < N / 64; ++j) tma::load_tile(&B, b + j * 8192, &bar, 64 * j, 0);
    } else {
      tma::load_tile(&B, b, &bar, 0, 0);
    }
  }
  mbar::wait(&bar, 0);
  float d[N / 2];
  for (int i = 0; i < N / 2; ++i) d[i] = __int_as_float(0x7fc00000);
  wgmma::fence();
  const unsigned short* a16 = reinterpret_cast<const unsigned short*>(a);
  const unsigned short* b16 = reinterpret_cast<const unsigned short*>(b);
#pragma unroll
  for (int k = 0; k < 64; k += 16) {
    if constexpr (KN)  // k rows of 128 bytes further into each [64][64] box
      wgmma::mma<N, T, 1>(d, wgmma::desc_k128(a16 + k), wgmma::desc_mn128(b + k * 128, 8192), k > 0);
    else
      wgmma::mma<N, T>(d, wgmma::desc_k128(a16 + k), wgmma::desc_k128(b16 + k), k > 0);
  }
  wgmma::commit();
  wgmma::wait<0>();
  const int t = threadIdx.x, w = t / 32, l = t % 32;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const int row = 16 * w + l / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (l % 4) + (i % 2);
    D[row * N + col] = d[i];
  }
}

#define WGMMA_TEST(N, T, KN, NAME)                                                            \
  extern "C" __global__ void __launch_bounds__(128) NAME(                                     \
      const __grid_constant__ CUtensorMap A, const __grid_constant__ CUtensorMap B, float* D) { \
    wgmma_tile<N, wgmma::T, KN>(A, B, D);                                                     \
  }
WGMMA_TEST(64, F16, false, wgmma_f16_n64)
WGMMA_TEST(128, F16, false, wgmma_f16_n128)
WGMMA_TEST(256, F16, false, wgmma_f16_n256)
WGMMA_TEST(64, BF16, false, wgmma_bf16_n64)
WGMMA_TEST(128, BF16, false, wgmma_bf16_n128)
WGMMA_TEST(256, BF16, false, wgmma_bf16_n256)
WGMMA_TEST(64, F16, true, wgmma_f16_n64_kn)
WGMMA_TEST(128, F16, true, wgmma_f16_n128_kn)
WGMMA_TEST(256, F16, true, wgmma_f16_n256_kn)
WGMMA_TEST(64, BF16, true, wgmma_bf16_n64_kn)
WGMMA_TEST(128, BF16, true, wgmma_bf16_n128_kn)
WGMMA_TEST(256, BF16, true, wgmma_bf16_n256_kn)

// 256 threads: warpgroup 0 gives registers away, warpgroup 1 takes them; each thread writes
// 1000 * warpgroup + thread index after a named barrier over warpgroup 1 only.
extern "C" __global__ void __launch_bounds__(256, 1) warpgroup_regs(int* out) {
  if (warpgroup::index() == 0) {
    warpgroup::dec_regs<40>();
    out[threadIdx.x] = warpgroup::thread();
  } else {
    warpgroup::inc_regs<232>();
    warpgroup::named_sync(1, 128);
    out[threadIdx.x] = 1000 + warpgroup::thread();
  }
}

// Clusters: out[3 * block + {0,1,2}] = rank, cluster size, the next rank's value read
// through distributed shared memory (each block stores 100 + its rank).
extern "C" __global__ void cluster_dsmem(int* out) {
  __shared__ int mine;
  const unsigned r = cluster::rank(), n = cluster::size();
  if (threadIdx.x == 0) mine = 100 + r;
  cluster::sync();
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x] = r;
    out[3 * blockIdx.x + 1] = n;
    out[3 * blockIdx.x + 2] = *cluster::map_shared(&mine, (r + 1) % n);
  }
  cluster::sync();  // peers may still read `mine`
}

// Multicast TMA in a cluster of `n` blocks: block r loads rows [r*rows, (r+1)*rows) of a
// (n*rows)×cols box region and multicasts it to all; every block dumps the whole tile.
extern "C" __global__ void tma_multicast(const __grid_constant__ CUtensorMap src, int rows,
                                         unsigned bytes_per_part, unsigned char* out) {
  unsigned char* tile = align1024(smem_raw);
  __shared__ alignas(8) unsigned long long bar;
  const unsigned r = cluster::rank(), n = cluster::size();
  if (threadIdx.x == 0) {
    mbar::init(&bar, 1);
    mbar::fence_init();
  }
  cluster::sync();  // every block's barrier exists before any multicast lands on it
  if (threadIdx.x == 0) {
    mbar::arrive_expect_tx(&bar, bytes_per_part * n);
    tma::load_tile_multicast(&src, tile + r * bytes_per_part, &bar,
                             static_cast<unsigned short>((1u << n) - 1), 0, r * rows);
  }
  mbar::wait(&bar, 0);
  for (unsigned i = threadIdx.x; i < bytes_per_part * n; i += blockDim.x)
    out[blockIdx.x * bytes_per_part * n + i] = tile[i];
  cluster::sync();  // no block exits while a peer's copy may still write into it
}

// Remote mbarrier arrivals in a cluster of n (<= 8) blocks: thread p of every block writes
// 1000 * rank + p into block p's got[rank] through distributed shared memory, then arrives on
// block p's `bar` (arrive_cluster: releases that write) and `bar_cta` (arrive_cluster_cta).
// Both barriers expect n arrivals; thread 0 waits on them (wait_cluster: acquire) and reports
// out[10 * block + {0, 1, 2 + q}] = bar done, bar_cta done, got[q] (expect 1000 * q + rank).
extern "C" __global__ void cluster_arrive(int* out) {
  __shared__ alignas(8) unsigned long long bar, bar_cta;
  __shared__ int got[8];
  const unsigned r = cluster::rank(), n = cluster::size();
  if (threadIdx.x == 0) {
    mbar::init(&bar, n);
    mbar::init(&bar_cta, n);
    mbar::fence_init();
  }
  cluster::sync();  // every block's barriers exist before anyone arrives on them
  if (threadIdx.x < n) {
    const unsigned p = threadIdx.x;
    *cluster::map_shared(&got[r], p) = static_cast<int>(1000 * r + p);
    mbar::arrive_cluster(&bar, p);
    mbar::arrive_cluster_cta(&bar_cta, p);
  }
  if (threadIdx.x == 0) {
    mbar::wait_cluster(&bar, 0);
    mbar::wait(&bar_cta, 0);
    out[10 * blockIdx.x] = mbar::try_wait(&bar, 0);
    out[10 * blockIdx.x + 1] = mbar::try_wait(&bar_cta, 0);
    for (unsigned q = 0; q < n; ++q) out[10 * blockIdx.x + 2 + q] = got[q];
  }
  cluster::sync();  // no block exits while a peer may still write into it
}

// PDL: the primary fills buf after some work; the dependent (launched with pdl=True) runs
// its prologue early, then waits for the primary's writes.
extern "C" __global__ void pdl_primary(int* buf, int n) {
  pdl::launch_dependents();
  float x = threadIdx.x;
  for (int i = 0; i < 2000; ++i) x = x * 0.999f + 1.0f;  // keep the primary busy a while
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    buf[i] = i + 1 + (x < 0.0f);
}
extern "C" __global__ void pdl_dependent(const int* buf, int* out, int n) {
  pdl::wait();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = 2 * buf[i];
}
