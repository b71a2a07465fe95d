// fp16 GEMM for sm_90a, C = A·Bᵀ, with A, B and C passed as three TMA tensor maps by value.
//
// Layouts (all row-major, like torch): A is M×K, B is N×K (the nn.Linear weight layout),
// C is M×N, so the torch reference is `a @ b.T`. fp16 in, fp32 accumulate, fp16 out.
//
// Host side (nanocuda.TensorMap.tiled, swizzle "none" on all three; the kernel reads shared
// memory as plain row-major tiles, which a swizzled layout would scramble):
//   A: box (BM, BK) = (64, 64)    B: box (BN, BK) = (64, 64)    C: box (BM, BN) = (64, 64)
//   grid (ceil(N/64), ceil(M/64)), block 128 threads; the last argument is K.
// TMA needs every row pitch to be a multiple of 16 bytes: K and N multiples of 8. Partial
// tiles at the edges are handled by TMA itself: loads fill out-of-bounds elements with
// zero (so they add nothing to the dot products) and stores skip them.
//
// Per block: one 64×64 tile of C. Thread 0 issues the TMA loads of K-tiles into a
// STAGES-deep ring of shared-memory buffers, each with an mbarrier that completes when its
// bytes have landed; the four warps each compute a 32×32 quarter with WMMA 16×16×16
// fragments. Then the fp32 result goes through shared memory to fp16 and out with one TMA
// store. Correctness first; it is not tuned (no swizzle, no wgmma, no warp specialisation):
// a teaching example. hopper_gemm_fast.cu is the fast one (TMA ring, wgmma, warp-specialized).
#include <cuda_fp16.h>
#include <mma.h>

#include "nanocuda/device/tma.cuh"

namespace {

constexpr int BM = 64, BN = 64, BK = 64;
constexpr int STAGES = 2;
constexpr int THREADS = 128;  // 4 warps in a 2×2 grid, 32×32 of C each
constexpr unsigned STAGE_BYTES = (BM * BK + BN * BK) * sizeof(__half);

// 1024-byte alignment would be needed for swizzled boxes; 128 is what unswizzled TMA needs.
struct alignas(128) Shared {
  __half a[STAGES][BM * BK];
  __half b[STAGES][BN * BK];
  unsigned long long full[STAGES];  // one mbarrier per stage: "this stage's tiles arrived"
};
// The epilogue reuses the A ring for the fp32 tile and the B ring for the fp16 tile.
static_assert(sizeof(float) * BM * BN <= sizeof(__half) * STAGES * BM * BK, "fp32 tile fits in a[]");
static_assert(sizeof(__half) * BM * BN <= sizeof(__half) * STAGES * BN * BK, "fp16 tile fits in b[]");

__device__ __forceinline__ void issue_loads(Shared& s, const CUtensorMap* A, const CUtensorMap* B,
                                            int stage, int k_tile, int m0, int n0) {
  using namespace nanocuda::tma;
  // The full box counts toward the barrier even where it is out of bounds (zero-filled).
  mbarrier_arrive_expect_tx(&s.full[stage], STAGE_BYTES);
  // Coordinates are innermost first: (k, row).
  load_tile(A, s.a[stage], &s.full[stage], k_tile * BK, m0);
  load_tile(B, s.b[stage], &s.full[stage], k_tile * BK, n0);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
    hopper_gemm(const __grid_constant__ CUtensorMap A, const __grid_constant__ CUtensorMap B,
                const __grid_constant__ CUtensorMap C, int K) {
  using namespace nvcuda;
  using namespace nanocuda::tma;
  __shared__ Shared s;
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int wm = warp / 2, wn = warp % 2;  // this warp's 32×32 quarter
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int k_tiles = (K + BK - 1) / BK;

  if (tid == 0) {
    prefetch_tensormap(&A);
    prefetch_tensormap(&B);
    prefetch_tensormap(&C);
    for (int i = 0; i < STAGES; ++i) mbarrier_init(&s.full[i], 1);
    fence_barrier_init();
  }
  __syncthreads();
  if (tid == 0)
    for (int t = 0; t < STAGES && t < k_tiles; ++t) issue_loads(s, &A, &B, t, t, m0, n0);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int t = 0; t < k_tiles; ++t) {
    const int stage = t % STAGES;
    mbarrier_wait(&s.full[stage], (t / STAGES) & 1);  // parity flips each reuse of a stage
    const __half* a = s.a[stage];
    const __half* b = s.b[stage];
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
      // B is stored N×K, i.e. Bᵀ's K×N tile in column-major order: exactly matrix_b col_major.
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb[2];
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], a + (wm * 32 + i * 16) * BK + kk, BK);
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], b + (wn * 32 + j * 16) * BK + kk, BK);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    // Every warp is done reading this stage before TMA may overwrite it.
    __syncthreads();
    if (tid == 0 && t + STAGES < k_tiles) {
      fence_proxy_async_shared();
      issue_loads(s, &A, &B, stage, t + STAGES, m0, n0);
    }
  }

  // Epilogue: fp32 fragments -> shared fp32 tile -> fp16 tile -> one TMA store. (The loop's
  // last __syncthreads means no warp still reads the rings reused here.)
  float* c32 = reinterpret_cast<float*>(&s.a[0][0]);
  __half* c16 = &s.b[0][0];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(c32 + (wm * 32 + i * 16) * BN + wn * 32 + j * 16, acc[i][j], BN,
                              wmma::mem_row_major);
  __syncthreads();
  for (int i = tid; i < BM * BN; i += THREADS) c16[i] = __float2half_rn(c32[i]);
  fence_proxy_async_shared();  // each thread's stores, before the async proxy reads them
  __syncthreads();
  if (tid == 0) {
    store_tile(&C, c16, n0, m0);
    store_commit();
    store_wait<0>();  // shared memory must outlive the store's reads
  }
}
