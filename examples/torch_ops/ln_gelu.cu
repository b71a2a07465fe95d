// Fused LayerNorm + GELU (exact, erf) over the last dimension, fp32: y = gelu(xhat * w + b),
// forward and the two backward kernels, for examples/torch_ops/model.py.
//
// One block per row for the row-wise kernels (block size: a power of two, <= 1024); the
// row statistics are saved by the forward pass so the backward recomputes xhat cheaply.

#define NC_INV_SQRT2 0.70710678118654752f
#define NC_INV_SQRT_2PI 0.39894228040143268f

// Sum of `v` over the block; every thread gets the result. `scratch` holds blockDim.x floats.
__device__ float block_sum(float v, float* scratch) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = (blockDim.x + 31) / 32;
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : 0.0f;
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ float gelu(float z) { return 0.5f * z * (1.0f + erff(z * NC_INV_SQRT2)); }

__device__ float gelu_grad(float z) {
  return 0.5f * (1.0f + erff(z * NC_INV_SQRT2)) + z * NC_INV_SQRT_2PI * expf(-0.5f * z * z);
}

// x, y: rows x n; w, b: n; mean, rstd: rows (saved for the backward).
extern "C" __global__ void ln_gelu_fwd(const float* __restrict__ x, const float* __restrict__ w,
                                       const float* __restrict__ b, float* __restrict__ y,
                                       float* __restrict__ mean, float* __restrict__ rstd,
                                       int n, float eps) {
  __shared__ float scratch[32];
  const long long row = blockIdx.x;
  const float* xr = x + row * n;
  float s = 0.0f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) s += xr[j];
  const float mu = block_sum(s, scratch) / n;
  float q = 0.0f;  // two passes: the centred sum of squares loses no precision to mu^2
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const float d = xr[j] - mu;
    q += d * d;
  }
  const float r = rsqrtf(block_sum(q, scratch) / n + eps);
  for (int j = threadIdx.x; j < n; j += blockDim.x) y[row * n + j] = gelu((xr[j] - mu) * r * w[j] + b[j]);
  if (threadIdx.x == 0) {
    mean[row] = mu;
    rstd[row] = r;
  }
}

// dx for one row per block: with g = dy * gelu'(z) and dxhat = g * w,
// dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
extern "C" __global__ void ln_gelu_bwd_dx(const float* __restrict__ dy, const float* __restrict__ x,
                                          const float* __restrict__ w, const float* __restrict__ b,
                                          const float* __restrict__ mean, const float* __restrict__ rstd,
                                          float* __restrict__ dx, int n) {
  __shared__ float scratch[32];
  const long long row = blockIdx.x;
  const float mu = mean[row], r = rstd[row];
  float s1 = 0.0f, s2 = 0.0f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const float xhat = (x[row * n + j] - mu) * r;
    const float dxhat = dy[row * n + j] * gelu_grad(xhat * w[j] + b[j]) * w[j];
    s1 += dxhat;
    s2 += dxhat * xhat;
  }
  const float m1 = block_sum(s1, scratch) / n;
  const float m2 = block_sum(s2, scratch) / n;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const float xhat = (x[row * n + j] - mu) * r;
    const float dxhat = dy[row * n + j] * gelu_grad(xhat * w[j] + b[j]) * w[j];
    dx[row * n + j] = r * (dxhat - m1 - xhat * m2);
  }
}

// dw and db: one thread per column, summing over the rows (reads are coalesced across j).
extern "C" __global__ void ln_gelu_bwd_dwdb(const float* __restrict__ dy, const float* __restrict__ x,
                                            const float* __restrict__ w, const float* __restrict__ b,
                                            const float* __restrict__ mean, const float* __restrict__ rstd,
                                            float* __restrict__ dw, float* __restrict__ db,
                                            int rows, int n) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  float sw = 0.0f, sb = 0.0f;
  for (int row = 0; row < rows; ++row) {
    const long long i = (long long)row * n + j;
    const float xhat = (x[i] - mean[row]) * rstd[row];
    const float g = dy[i] * gelu_grad(xhat * w[j] + b[j]);
    sw += g * xhat;
    sb += g;
  }
  dw[j] = sw;
  db[j] = sb;
}
