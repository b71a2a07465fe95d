// The TMA element type of a DLPack data type: what TensorMap.tiled uses for a tensor's dtype.
#pragma once

#include <cuda.h>

#include <optional>
#include <string_view>

#include "nanocuda/core/dlpack.h"

namespace nanocuda {

// TMA copies bits, so signedness only matters to the kernel (int8 travels as uint8) and
// float8 is copied as bytes. bool is rejected: a kernel storing through the map could write
// bytes other than 0/1 into a bool tensor; the error suggests a uint8 view. Unsupported
// types raise TypeError naming `where` and `name` (the dtype as the user spelled it).
[[nodiscard]] CUtensorMapDataType tma_data_type(dlpack::DataType dtype, std::string_view name,
                                                const char* where);

// The same mapping without an error: the TMA type of a one-lane DLPack type TMA copies (the
// bit widths above; float8 and bfloat16 only at 8 and 16 bits), else nullopt. Every type it
// accepts has a numpy/torch name, so a caller needs a name only on refusal.
[[nodiscard]] std::optional<CUtensorMapDataType> tma_data_type_if_supported(
    dlpack::DataType dtype) noexcept;

}  // namespace nanocuda
