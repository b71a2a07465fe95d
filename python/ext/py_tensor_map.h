// The Python-side TensorMap: the 128-byte descriptor plus the geometry it was built from.
//
// Launch code passes `map` by value (its first 128 bytes, map.data()) to a kernel parameter
// declared `const __grid_constant__ CUtensorMap`; the geometry is only for repr/introspection.
#pragma once

#include "nanocuda/tensor_map.h"

namespace nanocuda::py {

struct PyTensorMap {
  enum class Kind : uint8_t { Raw, Tiled, Im2col };
  TensorMap map;
  Kind kind = Kind::Raw;  // Raw: made by from_bytes; geometry unknown
  TiledParams tiled{};    // when kind == Tiled (swizzle resolved, address current)
  Im2colParams im2col{};  // when kind == Im2col
};

}  // namespace nanocuda::py
