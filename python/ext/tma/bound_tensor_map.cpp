// Reads a Python tensor's geometry and hands it to the core's bound map.
#include "tma/bound_tensor_map.h"

#include "tma/tensor_map_args.h"

namespace nanocuda::py {

const CUtensorMap& BoundTensorMap::update(nanobind::handle tensor, const char* where) {
  return nanocuda::BoundTensorMap::update(tensor_geometry(tensor, where));
}

}  // namespace nanocuda::py
