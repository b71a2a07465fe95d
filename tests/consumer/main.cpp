// Uses the installed nanocuda: compiles a kernel with NVRTC (no GPU needed) and asks for devices.
#include <cstdio>
#include <string>
#include <vector>

#include "nanocuda/nanocuda.h"

int main() {
  std::printf("nanocuda %s, built against CUDA %d\n", nanocuda::kVersion, nanocuda::kBuiltCudaVersion);
  int failures = 0;
  try {
    // An explicit arch: compiling needs NVRTC, not a GPU. tma.cuh must come from the
    // installed include folder (or the source tree), found by the library itself.
    nanocuda::ProgramOptions options;
    options.arch = "90";
    const char* source = R"(
#include <nanocuda/device/tma.cuh>
extern "C" __global__ void scale(float* x, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
})";
    auto code = nanocuda::Program(source, options).compile();
    std::printf("compiled: %zu-byte cubin with %s\n", code.bytes().size(),
                nanocuda::Program::nvrtc_path().c_str());
    if (code.bytes().size() < 64) ++failures;
    // A cubin's kernels are read from its ELF symbols: no driver needed.
    if (code.kernel_names() != std::vector<std::string>{"scale"}) ++failures;
  } catch (const nanocuda::ToolkitNotFoundError& e) {
    // No NVRTC on this machine: the message must say what to install.
    std::string what = e.what();
    std::printf("no NVRTC: %s\n", what.c_str());
    if (what.find("nvidia-cuda-nvrtc") == std::string::npos) ++failures;
  }
  try {
    std::printf("devices: %d\n", nanocuda::Device::count());
  } catch (const nanocuda::DriverNotFoundError& e) {
    std::printf("no driver: %s\n", e.what());
  }
  return failures;
}
