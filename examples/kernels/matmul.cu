// fp32 matmul C = A·B (A: M×K, B: K×N, C: M×N, all row-major), naive and shared-memory tiled.
// Teaching examples: they show indexing and shared-memory tiling, not speed (they run far
// below cuBLAS). The fast model is hopper_gemm.cu (TMA, wgmma, warp specialization).
//
// Launch both with block (16, 16) and grid (ceil(N/16), ceil(M/16)): x runs over columns of
// C, y over rows, so neighbouring threads read neighbouring B and write neighbouring C.

// One thread per element of C, every operand read straight from global memory.
extern "C" __global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N,
                                        int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

#define TILE 16

// Each block stages a TILE×TILE tile of A and of B in shared memory per step along K, so
// every global element is read once per block instead of once per thread.
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N,
                                        int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE + 1];  // +1: column reads of Bs hit distinct banks
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // Out-of-range elements load as zero, so edges need no special case in the product.
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();  // the tiles are overwritten next step
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
