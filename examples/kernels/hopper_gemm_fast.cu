// Fast Hopper GEMM (sm_90a): C = A·Bᵀ, fp16 or bf16 in, fp32 accumulate, fp16/bf16 out. The
// model of a fast Hopper kernel, built from nanocuda's device headers alone (no CUTLASS, no
// libc headers); hopper_gemm.cu is the short, slow first version (WMMA, one tile per block).
//
// Layouts (row-major, like torch): A is M×K, B is N×K (the nn.Linear weight), C is M×N; the
// torch reference is `a @ b.T`. Kernels: hopper_gemm_f16, hopper_gemm_bf16, with arguments
// (CUtensorMap A, CUtensorMap B, T* C, int M, int N, int K), T a 16-bit type.
//
// Host side (run_hopper_gemm_fast.py does all of this):
//   A: TensorMap.tiled(a, (BM, BK), swizzle="128B")  B: TensorMap.tiled(b, (BN, BK), swizzle="128B")
//   block 384 threads, dynamic shared memory STAGES * (BM + BN) * BK * 2 + 1024 + 256 bytes,
//   grid min(#tiles, #SMs) (persistent), BM = 128, BK = 64, BN = GEMM_BN (256, or -D 128).
// Any M, N, K with K a multiple of 8 (TMA needs 16-byte row pitches): TMA fills the
// out-of-bounds parts of edge tiles with zeros (they add nothing), and the epilogue's stores
// are predicated on the bounds.
//
// Structure (one block per SM, looping over output tiles):
//  - warpgroup 0, the producer, gives its registers away (setmaxnreg) and one thread issues TMA
//    loads of A and B K-tiles into a STAGES-deep ring; each slot has a "full" mbarrier (TMA
//    bytes landed) and an "empty" one (both consumers finished reading it).
//  - warpgroups 1 and 2, the consumers, take registers; each computes 64 rows × BN of the
//    128 × BN tile with wgmma m64nBNk16 straight from the 128B-swizzled shared tiles, keeping
//    one wgmma group in flight and freeing each slot as soon as the wgmma reading it is done.
//  - the epilogue converts the fp32 accumulators to 16-bit and stores them from registers,
//    while the producer already fills the ring with the next tile's K-tiles.
//  - tiles are visited in groups of GROUP_M tile-rows, so blocks running at the same time
//    share A and B tiles in L2.
#include "nanocuda/device/mbarrier.cuh"
#include "nanocuda/device/tma.cuh"
#include "nanocuda/device/warpgroup.cuh"
#include "nanocuda/device/wgmma.cuh"

#ifndef GEMM_BN
#define GEMM_BN 256
#endif
#ifndef GEMM_STAGES
#define GEMM_STAGES (GEMM_BN == 256 ? 4 : 6)
#endif
#ifndef GEMM_GROUP_M
#define GEMM_GROUP_M 8
#endif

namespace {

using namespace nanocuda;

constexpr int BM = 128, BN = GEMM_BN, BK = 64, STAGES = GEMM_STAGES;
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);
constexpr unsigned A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2;
static_assert(BN == 128 || BN == 256, "BN is 128 or 256");

// Dynamic shared memory: the rings (1024-byte aligned for the 128B swizzle), then barriers.
struct Ring {
  unsigned char a[STAGES][A_BYTES];
  unsigned char b[STAGES][B_BYTES];
  unsigned long long full[STAGES], empty[STAGES];
};

struct Tiles {
  int tiles_m, tiles_n;
  // Tile t -> (m0, n0), grouped: GROUP_M tile-rows are swept column by column.
  __device__ void coords(int t, int& m0, int& n0) const {
    const int per_group = GEMM_GROUP_M * tiles_n;
    const int first_m = (t / per_group) * GEMM_GROUP_M;
    const int rows = min(tiles_m - first_m, GEMM_GROUP_M);
    const int r = t % per_group;
    m0 = (first_m + r % rows) * BM;
    n0 = (r / rows) * BN;
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

template <wgmma::Type T>
__device__ __forceinline__ void gemm(const CUtensorMap& A, const CUtensorMap& B,
                                     unsigned short* C, int M, int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  Ring& s = *reinterpret_cast<Ring*>(smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u));
  const Tiles tiles{(M + BM - 1) / BM, (N + BN - 1) / BN};
  const int num_tiles = tiles.tiles_m * tiles.tiles_n;
  const int k_tiles = (K + BK - 1) / BK;

  if (threadIdx.x == 0) {
    tma::prefetch_tensormap(&A);
    tma::prefetch_tensormap(&B);
    for (int i = 0; i < STAGES; ++i) {
      mbar::init(&s.full[i], 1);
      mbar::init(&s.empty[i], CONSUMERS);
    }
    mbar::fence_init();
  }
  __syncthreads();

  if (warpgroup::index() == 0) {  // producer
    warpgroup::dec_regs<24>();
    if (threadIdx.x != 0) return;
    int it = 0;  // K-tiles issued so far, over all tiles: slot = it % STAGES
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      int m0, n0;
      tiles.coords(tile, m0, n0);
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int slot = it % STAGES;
        // The first pass over the ring waits on the phase "before" the first: returns at once.
        mbar::wait(&s.empty[slot], ((it / STAGES) & 1) ^ 1);
        mbar::arrive_expect_tx(&s.full[slot], A_BYTES + B_BYTES);
        tma::load_tile(&A, s.a[slot], &s.full[slot], kt * BK, m0);
        tma::load_tile(&B, s.b[slot], &s.full[slot], kt * BK, n0);
      }
    }
    return;
  }

  // consumers
  warpgroup::inc_regs<240>();
  const int cw = warpgroup::index() - 1;  // which 64-row half of the tile
  const bool leader = warpgroup::thread() == 0;
  int it = 0;
  float d[BN / 2];
  for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    int m0, n0;
    tiles.coords(tile, m0, n0);
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
    for (int kt = 0; kt < k_tiles; ++kt, ++it) {
      const int slot = it % STAGES;
      mbar::wait(&s.full[slot], (it / STAGES) & 1);
      const unsigned short* a = reinterpret_cast<const unsigned short*>(s.a[slot]) + cw * 64 * BK;
      const unsigned short* b = reinterpret_cast<const unsigned short*>(s.b[slot]);
      wgmma::fence();  // d's registers are about to be read and written by the tensor cores
#pragma unroll
      for (int k = 0; k < BK; k += 16)
        wgmma::mma<BN, T>(d, wgmma::desc_k128(a + k), wgmma::desc_k128(b + k));
      wgmma::commit();
      // The group before this one is done: its slot may be refilled.
      wgmma::wait<1>();
      if (kt > 0 && leader) mbar::arrive(&s.empty[(it + STAGES - 1) % STAGES]);
    }
    wgmma::wait<0>();
    if (k_tiles > 0 && leader) mbar::arrive(&s.empty[(it + STAGES - 1) % STAGES]);
    store_block<T>(d, C, M, N, m0 + 64 * cw, n0);
  }
}

}  // namespace

// -DGEMM_ONLY_F16 / -DGEMM_ONLY_BF16 compile one of the two: half the compile time.
#ifndef GEMM_ONLY_BF16
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    hopper_gemm_f16(const __grid_constant__ CUtensorMap A, const __grid_constant__ CUtensorMap B,
                    unsigned short* C, int M, int N, int K) {
  gemm<wgmma::F16>(A, B, C, M, N, K);
}
#endif

#ifndef GEMM_ONLY_F16
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    hopper_gemm_bf16(const __grid_constant__ CUtensorMap A, const __grid_constant__ CUtensorMap B,
                     unsigned short* C, int M, int N, int K) {
  gemm<wgmma::BF16>(A, B, C, M, N, K);
}
#endif
