// SAXPY from the CUDA Python overview: out = a * x + y, one thread per element.
extern "C" __global__ void saxpy(float a, float* x, float* y, float* out, size_t n) {
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (tid < n) out[tid] = a * x[tid] + y[tid];
}
