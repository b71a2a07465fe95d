// Re-reads a tensor's geometry each call and touches the descriptor only as much as needed.
#include "tma/bound_tensor_map.h"

#include "tma/tensor_map_args.h"

namespace nanocuda::py {

const TensorMap& BoundTensorMap::update(nanobind::handle tensor, const char* where) {
  TensorGeometry g = tensor_geometry(tensor, where);
  bool same_geometry = g.dtype == params_.dtype && g.rank == params_.rank;
  for (std::uint32_t i = 0; same_geometry && i < g.rank; ++i)
    same_geometry = g.shape[i] == params_.shape[i] && g.strides[i] == params_.strides[i];
  if (same_geometry) [[likely]] {
    if (g.ptr == params_.address) return map_;
    params_.address = g.ptr;
    for (const Recent& r : recent_)
      if (r.address == g.ptr) return map_ = r.map;  // a descriptor made for this address
    map_.replace_address(g.ptr);
    remember(g.ptr, map_);
    ++swaps_;
    return map_;
  }
  TiledParams next = params_;  // same box and options, new geometry
  next.dtype = g.dtype;
  next.rank = g.rank;
  next.address = g.ptr;
  next.shape = g.shape;
  next.strides = g.strides;
  map_ = TensorMap::tiled(next);  // validates first: a bad new geometry raises, cache intact
  params_ = next;
  recent_ = {};  // descriptors of the old geometry
  remember(next.address, map_);
  ++encodes_;
  return map_;
}

void BoundTensorMap::remember(std::uint64_t address, const TensorMap& map) noexcept {
  recent_[next_++ % recent_.size()] = Recent{address, map};
}

}  // namespace nanocuda::py
