// Elementwise square (the CUDA+PyTorch template's first kernel): out[i] = x[i] * x[i].
extern "C" __global__ void square(const float* x, float* out, long long n) {
  // A grid-stride loop, so any grid size covers any n.
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = x[i] * x[i];
}
