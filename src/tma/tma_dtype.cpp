// DLPack data types to TMA element types, with the rule for each refusal.
#include "nanocuda/tma/tma_dtype.h"

#include <string>

#include "nanocuda/driver/error.h"

namespace nanocuda {

std::optional<CUtensorMapDataType> tma_data_type_if_supported(dlpack::DataType dtype) noexcept {
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

CUtensorMapDataType tma_data_type(dlpack::DataType dtype, std::string_view name,
                                  const char* where) {
  if (std::optional<CUtensorMapDataType> t = tma_data_type_if_supported(dtype)) return *t;
  if (dtype.code == dlpack::kBool)
    throw TypeError(std::string(where) +
                    ": dtype bool is not supported for TMA (a kernel storing through the map "
                    "could write bytes other than 0 and 1 into a bool tensor); pass a uint8 "
                    "view of the tensor instead, e.g. t.view(torch.uint8)");
  throw TypeError(std::string(where) + ": unsupported dtype " + std::string(name) +
                  " for TMA (supported: (u)int8-64, float8, float16, bfloat16, float32, "
                  "float64)");
}

}  // namespace nanocuda
