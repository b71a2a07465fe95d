// The Python-side Buffer: a nanocuda::Buffer plus the dtype and shape it exports.
#pragma once

#include <vector>

#include "interop/dtype.h"
#include "nanocuda/core/buffer.h"

namespace nanocuda::py {

struct PyBuffer {
  Buffer buffer;
  DType dtype;                 // uint8 unless given
  std::vector<int64_t> shape;  // {size} unless given

  PyBuffer(Buffer b, DType d, std::vector<int64_t> s)
      : buffer(std::move(b)), dtype(d), shape(std::move(s)) {}
};

}  // namespace nanocuda::py
