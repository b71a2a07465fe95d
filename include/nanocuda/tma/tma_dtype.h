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
// Inline: it runs on every tensor a TMA path reads.
[[nodiscard]] inline std::optional<CUtensorMapDataType> tma_data_type_if_supported(
    dlpack::DataType dtype) noexcept {
  if (dtype.lanes != 1) return std::nullopt;
  const int bits = dtype.bits;
  switch (dtype.code) {
    case dlpack::kFloat8_e4m3fn:
    case dlpack::kFloat8_e5m2:
      if (bits == 8) return CU_TENSOR_MAP_DATA_TYPE_UINT8;  // copied as bytes
      break;
    case dlpack::kInt:
    case dlpack::kUInt:
      if (bits == 8) return CU_TENSOR_MAP_DATA_TYPE_UINT8;
      if (bits == 16) return CU_TENSOR_MAP_DATA_TYPE_UINT16;
      if (bits == 32)
        return dtype.code == dlpack::kInt ? CU_TENSOR_MAP_DATA_TYPE_INT32
                                          : CU_TENSOR_MAP_DATA_TYPE_UINT32;
      if (bits == 64)
        return dtype.code == dlpack::kInt ? CU_TENSOR_MAP_DATA_TYPE_INT64
                                          : CU_TENSOR_MAP_DATA_TYPE_UINT64;
      break;
    case dlpack::kFloat:
      if (bits == 16) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
      if (bits == 32) return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
      if (bits == 64) return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
      break;
    case dlpack::kBfloat:
      if (bits == 16) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
      break;
    default: break;
  }
  return std::nullopt;
}

}  // namespace nanocuda
