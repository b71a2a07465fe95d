// Element types by name: one table mapping "float16", numpy and torch dtypes to DLPack codes.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "nanocuda/core/dlpack.h"

namespace nanocuda::py {

struct DType {
  dlpack::DataType dl{dlpack::kUInt, 8, 1};
  const char* name = "uint8";      // canonical name, as numpy spells it ("bfloat16" too)
  const char* typestr = "|u1";     // __cuda_array_interface__ typestr
  [[nodiscard]] int itemsize() const { return dl.bits / 8; }
};

// Accepts a name ("float16", "f2", "half"), a numpy dtype or scalar type, or a torch dtype.
DType parse_dtype(nanobind::handle obj);
// The DType of a DLPack data type; raises TypeError for types nanocuda does not know.
DType dtype_from_dlpack(dlpack::DataType dl);
// The DType of a __cuda_array_interface__ typestr ("<f2").
DType dtype_from_typestr(const std::string& typestr);

}  // namespace nanocuda::py
