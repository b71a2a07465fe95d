// A Launcher's tensor-map parameter: the core BoundTensorMap, fed the geometry of each call's
// Python tensor (the only part that needs Python).
#pragma once

#include <nanobind/nanobind.h>

#include "nanocuda/tma/bound_tensor_map.h"

namespace nanocuda::py {

class BoundTensorMap : public nanocuda::BoundTensorMap {
 public:
  using nanocuda::BoundTensorMap::BoundTensorMap;

  // The descriptor for `tensor` (read as TensorMap.tiled reads it; errors name `where`).
  const CUtensorMap& update(nanobind::handle tensor, const char* where);
};

}  // namespace nanocuda::py
