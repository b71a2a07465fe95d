// DLPack data types to TMA element types, with the rule for each refusal.
#include "nanocuda/tma/tma_dtype.h"

#include <string>

#include "nanocuda/driver/error.h"

namespace nanocuda {

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
