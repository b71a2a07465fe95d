// Fused bias + GELU (tanh form) over a row-major [rows, cols] matrix, and its backward.
#define SQRT_2_OVER_PI 0.7978845608028654f

__device__ inline float gelu(float u, float* derivative) {
  const float inner = SQRT_2_OVER_PI * (u + 0.044715f * u * u * u);
  const float t = tanhf(inner);
  *derivative = 0.5f * (1.0f + t) +
                0.5f * u * (1.0f - t * t) * SQRT_2_OVER_PI * (1.0f + 3.0f * 0.044715f * u * u);
  return 0.5f * u * (1.0f + t);
}

// out = gelu(x + b[col])
extern "C" __global__ void bias_gelu(const float* x, const float* b, float* out, int rows, int cols) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= (long long)rows * cols) return;
  float d;
  out[i] = gelu(x[i] + b[i % cols], &d);
}

// dx = g * gelu'(x + b[col]); the bias gradient is dx summed over rows (done by XLA).
extern "C" __global__ void bias_gelu_backward(const float* x, const float* b, const float* g, float* dx,
                                              int rows, int cols) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= (long long)rows * cols) return;
  float d;
  gelu(x[i] + b[i % cols], &d);
  dx[i] = g[i] * d;
}
