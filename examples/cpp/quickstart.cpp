// The README's C++ quickstart as a program the build compiles (test_layout keeps the two equal).
//
//   ./nanocuda_example_quickstart       (prints "nanocuda: no NVIDIA driver ..." without a GPU)
#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

#include "nanocuda/nanocuda.h"

int main() try {
  const char* src = R"(
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
})";
  const unsigned n = 1 << 20;
  // README: begin
  auto stream = nanocuda::Stream::create(nanocuda::Device());  // owns its CUstream; APIs take a StreamRef view
  auto kernel = nanocuda::Program(src).compile().get_kernel("saxpy");  // NVRTC, cached on disk
  std::vector<float> hx(n, 1.5f), hy(n, 0.25f);
  auto x = nanocuda::to_buffer(hx, stream), y = nanocuda::to_buffer(hy, stream);  // sizes from the vectors
  nanocuda::Buffer out(4 * n, stream);  // through the device's memory resource
  auto saxpy = kernel.bind({{(n + 255) / 256, 1, 1}, {256, 1, 1}}, stream);  // hot loops: bind once
  saxpy(2.0f, x.ptr(), y.ptr(), out.ptr(), size_t(n));  // count and every size checked
  auto result = nanocuda::to_vector<float>(out, stream);  // waits for the stream
  // README: end

  // Not in the README: the check, so the program says whether it worked.
  bool ok = result.size() == n;
  for (float v : result) ok = ok && std::fabs(v - 3.25f) < 1e-6f;
  std::printf("saxpy on %u floats: %s\n", n, ok ? "correct" : "WRONG");
  return ok ? 0 : 1;
} catch (const std::exception& e) {  // no driver, no NVRTC, a CUDA error
  std::fprintf(stderr, "nanocuda: %s\n", e.what());
  return 2;
}
