// BoundTensorMap::update: the per-parameter use of the descriptor cache.
#include "nanocuda/tma/bound_tensor_map.h"

#include "nanocuda/core/any_context.h"

namespace nanocuda {

const CUtensorMap& BoundTensorMap::update(const TensorGeometry& g) {
  using detail::DescriptorCache;
  if (cache_.same_tensor(g)) [[likely]] {
    if (const CUtensorMap* hit = cache_.find(g.ptr, DescriptorCache::kAnyContext)) [[likely]] {
      ++cache_.stats.reuses;
      return *hit;
    }
    detail::AnyContext context;  // cuTensorMapReplaceAddress needs a current context
    return *cache_.swap(g.ptr, DescriptorCache::kAnyContext);  // the template's is there
  }
  TiledParams next = template_;  // same box and options, new geometry
  next.dtype = g.dtype;
  next.rank = g.rank;
  next.address = g.ptr;
  next.shape = g.shape;
  next.strides = g.strides;
  return cache_.encode(next, false);
}

}  // namespace nanocuda
