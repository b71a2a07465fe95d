// Element types from Python objects: names, numpy and torch dtypes, read through the core's table.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "nanocuda/core/array_view.h"

namespace nanocuda::py {

using nanocuda::DType;

// Accepts a name ("float16", "f2", "half"), a numpy dtype or scalar type, or a torch dtype.
DType parse_dtype(nanobind::handle obj);
// The DType of a DLPack data type; raises TypeError for types nanocuda does not know.
DType dtype_from_dlpack(dlpack::DataType dl);
// The DType of a __cuda_array_interface__ typestr ("<f2").
DType dtype_from_typestr(const std::string& typestr);

}  // namespace nanocuda::py
