// Two kernels shipped ahead of time: `nanocuda build` compiles this file into the wheel's fatbin.
#include "vec_common.h"

extern "C" __global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

// out = a * x + y
extern "C" __global__ void axpy(float* out, const float* x, const float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fma_axpy(a, x[i], y[i]);
}
