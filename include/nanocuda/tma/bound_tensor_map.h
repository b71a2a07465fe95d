// BoundTensorMap: a kernel's tensor-map parameter bound to a template (box and options), fed
// a new tensor's geometry on every call; the descriptor follows it through a DescriptorCache.
#pragma once

#include <cuda.h>

#include "nanocuda/tma/descriptor_cache.h"
#include "nanocuda/tma/tensor_geometry.h"
#include "nanocuda/tma/tensor_map.h"

namespace nanocuda {

// Not synchronized: one caller at a time (a Python Launcher uses it under the GIL, and gives
// a call that overlaps another a copy of its own). Copyable.
class BoundTensorMap {
 public:
  // `tiled` gives the box and options (and the first geometry); `map` is its descriptor.
  BoundTensorMap(const TiledParams& tiled, const TensorMap& map) noexcept : template_(tiled) {
    cache_.start(tiled, detail::DescriptorCache::kAnyContext, map.native());
  }

  // The descriptor for a tensor of geometry `g`: a remembered one when the geometry is the
  // same and its address was seen recently, an address swap when only the address is new,
  // a full (validated) encode when the geometry changed. Descriptors do not depend on the
  // context, so these serve whatever context is current (one is made current for the
  // driver calls if there is none). A bad new geometry raises and leaves the cache as it was.
  const CUtensorMap& update(const TensorGeometry& g);

  [[nodiscard]] unsigned encodes() const noexcept {
    return static_cast<unsigned>(cache_.stats.encodes);
  }
  [[nodiscard]] unsigned address_swaps() const noexcept {
    return static_cast<unsigned>(cache_.stats.address_swaps);
  }

 private:
  TiledParams template_;
  detail::DescriptorCache cache_;
};

}  // namespace nanocuda
