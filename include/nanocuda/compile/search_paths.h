// Public C++ for the folders searched for NVRTC, nvJitLink, libNVVM and the CUDA headers.
#pragma once

#include <string>
#include <vector>

namespace nanocuda {

// Adds folders searched for the toolkit libraries after $CUDA_HOME/the toolkit and before
// the build machine's toolkit (the Python package adds the NVIDIA pip wheels' here).
// Python: nanocuda.add_library_search_dirs().
void add_library_search_dirs(const std::vector<std::string>& dirs);
// Every folder searched for a toolkit library, in the order tried.
[[nodiscard]] std::vector<std::string> library_search_dirs();
// Adds folders searched for cuda.h and CCCL's headers (after those beside the loaded NVRTC).
void add_include_search_dirs(const std::vector<std::string>& dirs);

}  // namespace nanocuda
