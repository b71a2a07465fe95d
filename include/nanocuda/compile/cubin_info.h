// The kernels of a cubin and their parameter layouts, read from its ELF without a driver.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nanocuda/compile/param_layout.h"

namespace nanocuda {

struct CubinKernel {
  std::string name;    // the entry's symbol: the extern "C" name, or the mangled one
  ParamLayout layout;  // offset and size of each parameter, in order (classes left empty)
};

// The entry functions (ELF symbols the compiler marks as CUDA entries) of `cubin`, sorted
// by name, each with the layout its .nv.info.<name> section records (EIATTR_KPARAM_INFO):
// the same offsets and sizes cuKernelGetParamInfo reports. Throws ValueError on anything
// that is not a well-formed 64-bit ELF.
[[nodiscard]] std::vector<CubinKernel> cubin_kernels(std::string_view cubin);

// Just the names of cubin_kernels(cubin), sorted; device functions are not listed. Needs no
// driver, so build machines without a GPU can list what they compiled.
[[nodiscard]] std::vector<std::string> cubin_kernel_names(std::string_view cubin);

}  // namespace nanocuda
