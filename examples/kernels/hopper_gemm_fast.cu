// Fast Hopper GEMM (sm_90a): C = A·Bᵀ or C = A·B, fp16 or bf16 in, fp32 accumulate, fp16/bf16
// out. The model of a fast Hopper kernel, built from nanocuda's device headers alone (no
// CUTLASS, no libc headers); hopper_gemm.cu is the short, slow first version (WMMA, one tile per
// block). NOTES-hopper-gemm.md has the measurements behind each choice.
//
// Layouts (row-major, like torch): A is M×K, C is M×N, and B is
//   N×K (default; the nn.Linear weight): C = A·Bᵀ, the torch reference is `a @ b.T`;
//   K×N (-DGEMM_B_KN=1): C = A·B, the torch reference is `a @ b`.
// Kernels: hopper_gemm_f16, hopper_gemm_bf16 with arguments (CUtensorMap A, CUtensorMap B, C,
// int M, int N, int K), C a `T*` (T a 16-bit type) or, with -DGEMM_TMA_STORE=1, a CUtensorMap.
//
// Host side (run_hopper_gemm_fast.py does all of this), BM = 128, BK = 64, BN = GEMM_BN (128, 192
// or 256: the shape chooser there picks it against wave quantization):
//   A: TensorMap.tiled(a, (BM, BK), swizzle="128B")
//   B: N×K: TensorMap.tiled(b, (BN / CLUSTER, BK), swizzle="128B")
//      K×N: TensorMap.tiled(b, (BK, 64), swizzle="128B")        (N padded to a multiple of 8)
//   C with GEMM_TMA_STORE: TensorMap.tiled(c, (64, 64), swizzle="128B") (N a multiple of 8)
//   block 384 threads, dynamic shared memory STAGES * (BM + BN) * BK * 2 + 1024 + 256 bytes
//   (+ 16384 × GEMM_C_BUFS with GEMM_TMA_STORE); grid min(#tiles, #SMs) (persistent), or with
//   -DGEMM_CLUSTER=2 (4) a cluster shape of 2 (4) and 2 (4) * min(#tile pairs (quads),
//   co-resident clusters) blocks.
// Any M, N, K with K a multiple of 8 (TMA: 16-byte row pitches): TMA fills the out-of-bounds parts
// of edge tiles with zeros, and the epilogue's stores are predicated on the bounds (TMA stores clip).
//
// Structure (one block per SM, looping over output tiles):
//  - warpgroup 0, the producer, gives its registers away (setmaxnreg) and one thread issues TMA
//    loads of A and B K-tiles into a STAGES-deep ring; each slot has a "full" mbarrier (TMA
//    bytes landed) and an "empty" one (every consumer finished reading it).
//  - warpgroups 1 and 2, the consumers, take registers; each computes 64 rows × BN of the
//    128 × BN tile with wgmma m64nBNk16 straight from the 128B-swizzled shared tiles, keeping
//    one wgmma group in flight and freeing each slot as soon as the wgmma reading it is done.
//  - the epilogue converts the fp32 accumulators to 16-bit and stores them, while the producer
//    already fills the ring with the next tile's K-tiles. Default: straight from registers
//    (4-byte stores). GEMM_TMA_STORE=1: each consumer writes 64×64 chunks into a 128B-swizzled
//    shared buffer (conflict-free) and one thread stores each chunk with TMA (full lines, async),
//    double-buffered.
//  - GEMM_CLUSTER=2: two blocks of a cluster take the two M-tiles of one 256×BN pair and share
//    its B tile: each loads half of it and multicasts it to both, so B is read from L2 once per
//    pair. A slot is free only when the consumers of both blocks released it (they arrive on
//    both blocks' "empty" barriers). GEMM_CLUSTER=4: the same with four M-tiles and quarters.
//  - tiles are visited in groups of GROUP_M tile-rows, so blocks running at the same time
//    share A and B tiles in L2.
#include "nanocuda/device/cluster.cuh"
#include "nanocuda/device/mbarrier.cuh"
#include "nanocuda/device/tma.cuh"
#include "nanocuda/device/warpgroup.cuh"
#include "nanocuda/device/wgmma.cuh"

#ifndef GEMM_BN
#define GEMM_BN 256
#endif
#ifndef GEMM_STAGES
#define GEMM_STAGES (GEMM_BN == 128 ? 6 : 4)
#endif
#ifndef GEMM_GROUP_M
#define GEMM_GROUP_M 8
#endif
#ifndef GEMM_B_KN
#define GEMM_B_KN 0
#endif
#ifndef GEMM_CLUSTER
#define GEMM_CLUSTER 1
#endif
#ifndef GEMM_TMA_STORE
#define GEMM_TMA_STORE 0
#endif
// TMA-store staging buffers per consumer: 2 alternate; 1 frees 16 KB for a fifth stage at BN = 192
// (each chunk then waits until TMA has read the previous one).
#ifndef GEMM_C_BUFS
#define GEMM_C_BUFS 2
#endif
// GEMM_DEFER_EPILOGUE=1 (with GEMM_TMA_STORE): a consumer packs its finished tile to 16 bits (BN / 4
// registers) and stores it after issuing the next tile's first two wgmma groups.
#ifndef GEMM_DEFER_EPILOGUE
#define GEMM_DEFER_EPILOGUE 0
#endif
// L2 priorities (.L2::cache_hint): GEMM_L2_HINTS=1 stores C evict_first (written once: its lines
// go before the operands'); 2 also loads A and B evict_last (re-read by other tiles).
#ifndef GEMM_L2_HINTS
#define GEMM_L2_HINTS 0
#endif
// setmaxnreg split (per thread): the clustered producer needs more than 24 registers to keep
// its multicast loop out of local memory (ptxas spills it otherwise).
#ifndef GEMM_PRODUCER_REGS
#define GEMM_PRODUCER_REGS (GEMM_CLUSTER > 1 ? 40 : 24)
#endif
#ifndef GEMM_CONSUMER_REGS
#define GEMM_CONSUMER_REGS (GEMM_CLUSTER > 1 ? 232 : 240)
#endif

namespace {

using namespace nanocuda;

constexpr int BM = 128, BN = GEMM_BN, BK = 64, STAGES = GEMM_STAGES, CLUSTER = GEMM_CLUSTER;
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);
constexpr unsigned A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2;
#if GEMM_B_KN
constexpr unsigned B_BOX_BYTES = BK * 128;  // K×N B: one [BK][64] box (64 columns = 128 bytes)
#endif
#if GEMM_TMA_STORE
constexpr unsigned C_CHUNK_BYTES = 64 * 64 * 2;  // a 64×64 chunk of C
#endif
static_assert(BN == 128 || BN == 192 || BN == 256, "BN is 128, 192 or 256");
static_assert(CLUSTER == 1 || CLUSTER == 2 || CLUSTER == 4, "GEMM_CLUSTER is 1, 2 or 4");
constexpr unsigned short PEERS = (1u << CLUSTER) - 1;  // multicast mask: every block of the cluster
// The block starts with 168 registers a thread (64K / 384, rounded down to 8); what the
// producer gives back is all the consumers can take.
static_assert(GEMM_PRODUCER_REGS * 128 + GEMM_CONSUMER_REGS * 256 <= 168 * THREADS,
              "setmaxnreg split exceeds the block's registers");
static_assert(GEMM_GROUP_M % CLUSTER == 0, "GROUP_M counts whole cluster tile pairs");
static_assert(GEMM_C_BUFS == 1 || GEMM_C_BUFS == 2, "GEMM_C_BUFS is 1 or 2");
static_assert(!GEMM_DEFER_EPILOGUE || GEMM_TMA_STORE, "GEMM_DEFER_EPILOGUE needs GEMM_TMA_STORE");
static_assert(GEMM_L2_HINTS >= 0 && GEMM_L2_HINTS <= 2, "GEMM_L2_HINTS is 0, 1 or 2");

// A 2-D TMA load (multicast to `mask` when nonzero) with evict_last under GEMM_L2_HINTS=2.
__device__ __forceinline__ void load_2d(const CUtensorMap* map, void* dst, unsigned long long* bar,
                                        unsigned short mask, int x, int y) {
#if GEMM_L2_HINTS >= 2
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  if (mask == 0)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 ".L2::cache_hint [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_addr(dst)),
                 "l"(tma::map_addr(map)), "r"(smem_addr(bar)), "r"(x), "r"(y), "l"(policy)
                 : "memory");
  else
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 ".multicast::cluster.L2::cache_hint [%0], [%1, {%3, %4}], [%2], %5, %6;" ::"r"(smem_addr(dst)),
                 "l"(tma::map_addr(map)), "r"(smem_addr(bar)), "r"(x), "r"(y), "h"(mask), "l"(policy)
                 : "memory");
#else
  mask == 0 ? tma::load_tile(map, dst, bar, x, y) : tma::load_tile_multicast(map, dst, bar, mask, x, y);
#endif
}

#if GEMM_TMA_STORE
// A 2-D TMA store of C, evict_first under GEMM_L2_HINTS >= 1.
__device__ __forceinline__ void store_c(const CUtensorMap* map, const void* src, int x, int y) {
#if GEMM_L2_HINTS >= 1
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%2, %3}], [%1], %4;"
               ::"l"(tma::map_addr(map)), "r"(smem_addr(src)), "r"(x), "r"(y), "l"(policy)
               : "memory");
#else
  tma::store_tile(map, src, x, y);
#endif
}
#endif

// Dynamic shared memory: the rings (1024-byte aligned for the 128B swizzle), then barriers.
struct Ring {
  unsigned char a[STAGES][A_BYTES];
  unsigned char b[STAGES][B_BYTES];
#if GEMM_TMA_STORE
  unsigned char c[CONSUMERS][GEMM_C_BUFS][C_CHUNK_BYTES];  // each consumer's staging buffers
#endif
  unsigned long long full[STAGES], empty[STAGES];
};

struct Tiles {
  int tiles_m, tiles_n;  // in units of scheduled tiles (a cluster's tile pair counts once)
  // Tile t -> (tile row, tile column), grouped: `group` tile-rows are swept column by column.
  __device__ void coords(int t, int group, int& tm, int& tn) const {
    const int per_group = group * tiles_n;
    const int first_m = (t / per_group) * group;
    const int rows = min(tiles_m - first_m, group);
    const int r = t % per_group;
    tm = first_m + r % rows;
    tn = r / rows;
  }
};

template <wgmma::Type T>
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  unsigned r;
  if constexpr (T == wgmma::F16)
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Stores this thread's part of a 64×BN accumulator block at (row0, n0), within M×N.
template <wgmma::Type T>
__device__ __forceinline__ void store_block(const float (&d)[BN / 2], unsigned short* C, int M,
                                            int N, int row0, int n0) {
  const int t = warpgroup::thread(), w = t / 32, l = t % 32;
  const int r0 = row0 + 16 * w + l / 4;
  const bool even_n = (N & 1) == 0;  // 4-byte stores need an even row pitch
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int col = n0 + 8 * j + 2 * (l % 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = r0 + 8 * h;
      if (row >= M) continue;
      const unsigned v = pack2<T>(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
      unsigned short* p = C + static_cast<long long>(row) * N + col;
      if (even_n && col + 1 < N) {
        *reinterpret_cast<unsigned*>(p) = v;
      } else {
        if (col < N) p[0] = static_cast<unsigned short>(v & 0xFFFF);
        if (col + 1 < N) p[1] = static_cast<unsigned short>(v >> 16);
      }
    }
  }
}

#if GEMM_TMA_STORE
// The same block through shared memory: 64×64 chunks written 128B-swizzled (row r's 16-byte
// chunk c at c ^ (r % 8): the 8 rows × 16 bytes of one warp store hit all 32 banks once), then
// stored by one thread with TMA, which clips rows and columns outside M×N. GEMM_C_BUFS buffers per
// consumer alternate; `issued` counts this warpgroup's stores so far (the same in all threads).
// `value(j, h)` is the packed pair of columns 8j + 2(l % 4) in row 8h of this thread's rows.
template <typename Value>
__device__ __forceinline__ void store_block_tma(Value value, const CUtensorMap* C,
                                                unsigned char (*stage)[C_CHUNK_BYTES], int N,
                                                int row0, int n0, unsigned barrier_id,
                                                unsigned& issued) {
  const int t = warpgroup::thread(), w = t / 32, l = t % 32;
#pragma unroll
  for (int q = 0; q < BN / 64; ++q) {
    if (n0 + 64 * q >= N) continue;  // the same for the whole warpgroup
    unsigned char* buf = stage[issued % GEMM_C_BUFS];
    // The store issued from this buffer GEMM_C_BUFS chunks ago has finished reading it.
    if (t == 0) tma::store_wait_read<GEMM_C_BUFS - 1>();
    warpgroup::named_sync(barrier_id, 128);
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
      const int j = 8 * q + jj;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = 16 * w + l / 4 + 8 * h;  // r % 8 == l / 4
        const unsigned v = value(j, h);
        *reinterpret_cast<unsigned*>(buf + r * 128 + ((jj ^ (l / 4)) << 4) + 4 * (l % 4)) = v;
      }
    }
    tma::fence_proxy_async_shared();  // these generic writes, before TMA reads them
    warpgroup::named_sync(barrier_id, 128);
    if (t == 0) {
      store_c(C, buf, n0 + 64 * q, row0);
      tma::store_commit();
    }
    ++issued;
  }
}
#endif

// Loads K-tile kt of B for output columns n0.. into `dst` (this block's part of it, multicast
// to both blocks of the cluster when CLUSTER == 2).
__device__ __forceinline__ void load_b(const CUtensorMap& B, unsigned char* dst,
                                       unsigned long long* bar, int kt, int n0, unsigned rank) {
#if GEMM_B_KN
  // [BK][64] boxes this block loads: rank 0 takes the first half, rounded up (BN = 192 in a
  // cluster: 2 and 1); every box is multicast, so both blocks' barriers see all of B.
  constexpr int boxes = (BN / 64 + CLUSTER - 1) / CLUSTER;
#pragma unroll
  for (int i = 0; i < boxes; ++i) {
    const int j = static_cast<int>(rank) * boxes + i;
    if (j >= BN / 64) break;
    load_2d(&B, dst + j * B_BOX_BYTES, bar, CLUSTER == 1 ? 0 : PEERS, n0 + 64 * j, kt * BK);
  }
#else
  if constexpr (CLUSTER == 1)
    load_2d(&B, dst, bar, 0, kt * BK, n0);
  else
    load_2d(&B, dst + rank * (B_BYTES / CLUSTER), bar, PEERS, kt * BK,
            n0 + static_cast<int>(rank) * (BN / CLUSTER));
#endif
}

// Frees ring slot `slot` for the producers (this block's, and the peer's when clustered).
__device__ __forceinline__ void release(unsigned long long* empty) {
  if constexpr (CLUSTER == 1) {
    mbar::arrive(empty);
  } else {
    // No writes to publish (wgmma only read the slot): the bare remote arrive, no GPU fence.
#pragma unroll
    for (unsigned r = 0; r < CLUSTER; ++r) mbar::arrive_cluster_cta(empty, r);
  }
}

#if GEMM_TMA_STORE
using COut = const CUtensorMap*;
#else
using COut = unsigned short*;
#endif

template <wgmma::Type T>
__device__ __forceinline__ void gemm(const CUtensorMap& A, const CUtensorMap& B, COut C, int M,
                                     int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  Ring& s = *reinterpret_cast<Ring*>(smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u));
  const int tiles_m = (M + BM - 1) / BM;
  // Scheduled tiles: clustered blocks take the two M-tiles of a pair (the second may lie past
  // M when tiles_m is odd: that block loads the last real A tile again and stores nothing).
  const Tiles tiles{(tiles_m + CLUSTER - 1) / CLUSTER, (N + BN - 1) / BN};
  const int num_tiles = tiles.tiles_m * tiles.tiles_n;
  const int k_tiles = (K + BK - 1) / BK;
  // A 1-D grid of 1-D clusters: cluster::rank() == blockIdx.x % CLUSTER and cluster::id_x() ==
  // blockIdx.x / CLUSTER. Written with blockIdx so the compiler may re-read instead of spilling.
  const unsigned rank = blockIdx.x % CLUSTER;
  const int first = static_cast<int>(blockIdx.x) / CLUSTER;
  const int stride = static_cast<int>(gridDim.x) / CLUSTER;

  if (threadIdx.x == 0) {
    tma::prefetch_tensormap(&A);
    tma::prefetch_tensormap(&B);
    for (int i = 0; i < STAGES; ++i) {
      mbar::init(&s.full[i], 1);
      mbar::init(&s.empty[i], CONSUMERS * CLUSTER);
    }
    mbar::fence_init();
  }
  if constexpr (CLUSTER == 1)
    __syncthreads();
  else
    cluster::sync();  // the peer's barriers exist before any multicast or remote arrive

  if (warpgroup::index() == 0) {  // producer
    warpgroup::dec_regs<GEMM_PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      int it = 0;  // K-tiles issued so far, over all tiles: slot = it % STAGES
      for (int tile = first; tile < num_tiles; tile += stride) {
        int tm, tn;
        tiles.coords(tile, GEMM_GROUP_M / CLUSTER, tm, tn);
        const int m0 = min(tm * CLUSTER + static_cast<int>(rank), tiles_m - 1) * BM, n0 = tn * BN;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int slot = it % STAGES;
          // The first pass over the ring waits on the phase "before" the first: returns at once.
          // (Clustered, the peer's consumers arrive here too; TMA reads nothing they wrote,
          // so the CTA-scope wait is enough.)
          mbar::wait(&s.empty[slot], ((it / STAGES) & 1) ^ 1);
          // A, and all of B: the peer's multicast half lands on this barrier too.
          mbar::arrive_expect_tx(&s.full[slot], A_BYTES + B_BYTES);
          load_2d(&A, s.a[slot], &s.full[slot], 0, kt * BK, m0);
          load_b(B, s.b[slot], &s.full[slot], kt, n0, rank);
        }
      }
    }
    if constexpr (CLUSTER == 1) return;
    __syncwarp();
  } else {  // consumers
    warpgroup::inc_regs<GEMM_CONSUMER_REGS>();
    const int cw = warpgroup::index() - 1;  // which 64-row half of the tile
    const bool leader = warpgroup::thread() == 0;
#if GEMM_TMA_STORE
    unsigned issued = 0;
#endif
#if GEMM_DEFER_EPILOGUE
    unsigned held[BN / 4] = {};  // the previous tile's part of C, packed: stored under this tile's wgmma
    int held_row0 = -1, held_n0 = 0;  // held_row0 < 0: nothing held
    const auto held_value = [&](int j, int h) { return held[2 * j + h]; };
    const int store_at = k_tiles > 1 ? 1 : 0;  // after the second group is issued (two in flight)
#endif
    int it = 0;
    float d[BN / 2];
    for (int tile = first; tile < num_tiles; tile += stride) {
      int tm, tn;
      tiles.coords(tile, GEMM_GROUP_M / CLUSTER, tm, tn);
      const int m0 = (tm * CLUSTER + static_cast<int>(rank)) * BM, n0 = tn * BN;
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int slot = it % STAGES;
        mbar::wait(&s.full[slot], (it / STAGES) & 1);
        const unsigned short* a = reinterpret_cast<const unsigned short*>(s.a[slot]) + cw * 64 * BK;
        wgmma::fence();  // d's registers are about to be read and written by the tensor cores
#if GEMM_B_KN
        // B is MN-major: K rows of 128 bytes in [BK][64] boxes B_BOX_BYTES apart.
#pragma unroll
        for (int k = 0; k < BK; k += 16)
          wgmma::mma<BN, T, 1>(d, wgmma::desc_k128(a + k),
                               wgmma::desc_mn128(s.b[slot] + k * 128, B_BOX_BYTES));
#else
        const unsigned short* b = reinterpret_cast<const unsigned short*>(s.b[slot]);
#pragma unroll
        for (int k = 0; k < BK; k += 16)
          wgmma::mma<BN, T>(d, wgmma::desc_k128(a + k), wgmma::desc_k128(b + k));
#endif
        wgmma::commit();
#if GEMM_DEFER_EPILOGUE
        if (kt == store_at && held_row0 >= 0) {  // the same in the whole warpgroup
          store_block_tma(held_value, C, s.c[cw], N, held_row0, held_n0, 1 + cw, issued);
          held_row0 = -1;
        }
#endif
        // The group before this one is done: its slot may be refilled.
        wgmma::wait<1>();
        if (kt > 0 && leader) release(&s.empty[(it + STAGES - 1) % STAGES]);
      }
      wgmma::wait<0>();
      if (k_tiles > 0 && leader) release(&s.empty[(it + STAGES - 1) % STAGES]);
      const int row0 = m0 + 64 * cw;
      if (row0 >= M) continue;  // the whole warpgroup: nothing of this block is in C
#if GEMM_DEFER_EPILOGUE
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) held[2 * j + h] = pack2<T>(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
      }
      held_row0 = row0;
      held_n0 = n0;
#elif GEMM_TMA_STORE
      store_block_tma([&](int j, int h) { return pack2<T>(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]); }, C,
                      s.c[cw], N, row0, n0, 1 + cw, issued);
#else
      store_block<T>(d, C, M, N, row0, n0);
#endif
    }
#if GEMM_DEFER_EPILOGUE
    if (held_row0 >= 0) store_block_tma(held_value, C, s.c[cw], N, held_row0, held_n0, 1 + cw, issued);
#endif
#if GEMM_TMA_STORE
    if (leader) tma::store_wait<0>();  // the stores have read shared memory before it goes
#endif
  }
  // Clustered: no block exits while its peer may still arrive on its barriers or multicast
  // into its shared memory. (All threads get here: the producer warp reconverged above.)
  if constexpr (CLUSTER > 1) cluster::sync();
}

}  // namespace

#if GEMM_TMA_STORE
#define GEMM_C_PARAM const __grid_constant__ CUtensorMap C
#define GEMM_C_ARG &C
#else
#define GEMM_C_PARAM unsigned short* C
#define GEMM_C_ARG C
#endif

// -DGEMM_ONLY_F16 / -DGEMM_ONLY_BF16 compile one of the two: half the compile time.
#ifndef GEMM_ONLY_BF16
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    hopper_gemm_f16(const __grid_constant__ CUtensorMap A, const __grid_constant__ CUtensorMap B,
                    GEMM_C_PARAM, int M, int N, int K) {
  gemm<wgmma::F16>(A, B, GEMM_C_ARG, M, N, K);
}
#endif

#ifndef GEMM_ONLY_F16
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    hopper_gemm_bf16(const __grid_constant__ CUtensorMap A, const __grid_constant__ CUtensorMap B,
                     GEMM_C_PARAM, int M, int N, int K) {
  gemm<wgmma::BF16>(A, B, GEMM_C_ARG, M, N, K);
}
#endif
