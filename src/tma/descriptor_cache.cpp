// DescriptorCache: one geometry, its recent descriptors, and the address swap between them.
#include "nanocuda/tma/descriptor_cache.h"

#include <atomic>

#include "nanocuda/core/any_context.h"
#include "nanocuda/driver/check.h"

namespace nanocuda::detail {

DescriptorCache& DescriptorCache::for_this_thread() noexcept {
  thread_local DescriptorCache cache;
  return cache;
}

bool DescriptorCache::same_geometry(const TiledParams& p) const noexcept {
  const TiledParams& g = geometry_;
  if (!valid_ || p.rank != g.rank || p.dtype != g.dtype || (p.address & (address_align_ - 1)) != 0)
    return false;
  std::uint64_t diff = 0;  // branch-free over the dims: typically 2 to 3 of them
  for (std::uint32_t i = 0; i < p.rank && i < kTensorMapMaxRank; ++i)
    diff |= (p.shape[i] ^ g.shape[i]) | (p.strides[i] ^ g.strides[i]) | (p.box[i] ^ g.box[i]) |
            (p.options.element_strides[i] ^ g.options.element_strides[i]);
  return diff == 0 && p.options.interleave == g.options.interleave &&
         p.options.swizzle == g.options.swizzle &&
         p.options.l2_promotion == g.options.l2_promotion &&
         p.options.oob_fill == g.options.oob_fill;
}

bool DescriptorCache::at(std::uint64_t address, CUtensorMap& out) {
  if (!valid_ || (address & (address_align_ - 1)) != 0) return false;
  AnyContext context;
  if (const CUtensorMap* hit = find(address, context.get())) {
    out = *hit;
    ++stats.reuses;
    return true;
  }
  const CUtensorMap* swapped = swap(address, context.get());
  if (!swapped) return false;
  out = *swapped;
  return true;
}

const CUtensorMap* DescriptorCache::swap(std::uint64_t address, CUcontext context) {
  const CUtensorMap* newest = latest(context);
  if (!newest) return nullptr;
  CUtensorMap map = *newest;
  NANOCUDA_CALL(cuTensorMapReplaceAddress, [&] {
    TiledParams p = geometry_;
    p.address = address;
    return "TensorMap::tiled(" + describe(p) + ")";
  }, &map, reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)));
  add(address, map);
  ++stats.address_swaps;
  return &recent_[newest_].map;
}

const CUtensorMap& DescriptorCache::encode(const TiledParams& p, bool keyed_on_context) {
  (void)TensorMap::encode_tiled(p, *this, keyed_on_context);  // validates, encodes, start()s
  return recent_[newest_].map;
}

void DescriptorCache::start(const TiledParams& p, CUcontext context,
                            const CUtensorMap& map) noexcept {
  static std::atomic<std::uint64_t> generations{0};
  generation_ = generations.fetch_add(1, std::memory_order_relaxed) + 1;
  valid_ = true;
  // The address rule validation applied: 32 bytes for 32B interleave and the packed types.
  const bool packed = p.dtype >= CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
  address_align_ = (p.options.interleave == CU_TENSOR_MAP_INTERLEAVE_32B || packed) ? 32 : 16;
  context_ = context;
  geometry_ = p;
  count_ = 0;
  newest_ = 0;
  add(p.address, map);
}

}  // namespace nanocuda::detail

namespace nanocuda {

// TensorMap's memo queries live here, beside for_this_thread() and at(), so the compiler
// inlines both: the binding's per-launch path makes one call where it made two.
std::uint64_t TensorMap::tiled_memo_generation() noexcept {
  return detail::DescriptorCache::for_this_thread().generation();
}

bool TensorMap::tiled_from_memo(std::uint64_t generation, std::uint64_t address, CUtensorMap& out) {
  detail::DescriptorCache& cache = detail::DescriptorCache::for_this_thread();
  return generation != 0 && cache.generation() == generation && cache.at(address, out);
}

}  // namespace nanocuda
