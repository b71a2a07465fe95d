// A kernel's parameter layout (offset and size of each parameter), as the driver reports it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nanocuda {

struct ParamInfo {
  std::uint32_t offset;  // byte offset in the kernel's parameter buffer
  std::uint32_t size;    // bytes
};

// The parameters of one kernel, in order. Filled from cuKernelGetParamInfo /
// cuFuncGetParamInfo; launches pack arguments against it.
struct ParamLayout {
  std::vector<ParamInfo> params;

  [[nodiscard]] std::size_t count() const noexcept { return params.size(); }
  // Size of the packed parameter buffer: the end of the last parameter.
  [[nodiscard]] std::size_t total_size() const noexcept {
    return params.empty() ? 0 : params.back().offset + params.back().size;
  }
};

}  // namespace nanocuda
