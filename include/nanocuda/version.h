// Versions: nanocuda's own, and the CUDA headers it was built against.
#pragma once

#include <cuda.h>

namespace nanocuda {

inline constexpr const char* kVersion = "0.1.0";
// CUDA_VERSION of the cuda.h nanocuda was compiled against (e.g. 13000).
inline constexpr int kBuiltCudaVersion = CUDA_VERSION;

}  // namespace nanocuda
