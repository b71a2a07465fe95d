// A kernel's parameter layout (offset and size of each parameter), as the driver reports it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nanocuda/compile/param_class.h"

namespace nanocuda {

struct ParamInfo {
  std::uint32_t offset;  // byte offset in the kernel's parameter buffer
  std::uint32_t size;    // bytes
};

// The parameters of one kernel, in order. Filled from cuKernelGetParamInfo /
// cuFuncGetParamInfo; launches pack arguments against it.
struct ParamLayout {
  std::vector<ParamInfo> params;
  // One class per parameter when the kernel's mangled name says them, else empty (kept
  // apart from `params` so the packing loop reads the same 8 bytes per parameter).
  std::vector<ParamClass> classes = {};

  [[nodiscard]] ParamClass class_of(std::size_t i) const noexcept {
    return i < classes.size() ? classes[i] : ParamClass::Unknown;
  }

  [[nodiscard]] std::size_t count() const noexcept { return params.size(); }
  // Size of the packed parameter buffer: the end of the last parameter.
  [[nodiscard]] std::size_t total_size() const noexcept {
    return params.empty() ? 0 : params.back().offset + params.back().size;
  }
};

}  // namespace nanocuda
