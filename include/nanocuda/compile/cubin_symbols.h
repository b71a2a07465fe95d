// The kernels in a cubin, read from its ELF symbol table without the driver.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nanocuda {

// The kernels (entry functions) in a 64-bit ELF cubin, sorted: global or weak function
// symbols that the compiler marks as CUDA entries (bit 0x10 of st_other). Device functions
// are not listed; template kernels appear under their mangled names. Needs no driver, so
// build machines without a GPU can list what they compiled. Throws ValueError for bytes
// that are not a 64-bit ELF or are truncated.
[[nodiscard]] std::vector<std::string> cubin_kernel_names(std::string_view cubin);

}  // namespace nanocuda
