// The per-thread cache of encoded tiled descriptors.
#include "nanocuda/tensor_map_cache.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "nanocuda/detail/check.h"

namespace nanocuda {

namespace {

std::atomic<int> g_enabled{-1};  // -1: not yet read from the environment

// Field by field: padding in TensorMapDriverArgs is not guaranteed to be zero.
bool same(const TensorMapDriverArgs& a, const TensorMapDriverArgs& b) {
  const std::uint32_t r = a.rank;
  return a.rank == b.rank && a.dtype == b.dtype && a.address == b.address &&
         std::equal(a.global_dim, a.global_dim + r, b.global_dim) &&
         std::equal(a.global_strides, a.global_strides + (r ? r - 1 : 0), b.global_strides) &&
         std::equal(a.box_dim, a.box_dim + r, b.box_dim) &&
         std::equal(a.element_strides, a.element_strides + r, b.element_strides) &&
         a.interleave == b.interleave && a.swizzle == b.swizzle &&
         a.l2_promotion == b.l2_promotion && a.oob_fill == b.oob_fill;
}

std::uint64_t hash(const TensorMapDriverArgs& a) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(reinterpret_cast<std::uintptr_t>(a.address) >> 4);
  mix(a.dtype);
  mix(a.rank);
  for (std::uint32_t i = 0; i < a.rank; ++i) mix(a.global_dim[i] * 31 + a.box_dim[i]);
  mix(a.swizzle);
  return h;
}

struct Entry {
  bool valid = false;
  TensorMapDriverArgs args{};
  TensorMap map;
};

}  // namespace

void TensorMapCache::set_enabled(bool enabled) noexcept { g_enabled.store(enabled ? 1 : 0); }

bool TensorMapCache::enabled() noexcept {
  int e = g_enabled.load(std::memory_order_relaxed);
  if (e < 0) {
    const char* env = std::getenv("NANOCUDA_TMA_CACHE");
    e = env && (std::strcmp(env, "0") == 0 || std::strcmp(env, "off") == 0) ? 0 : 1;
    g_enabled.store(e);
  }
  return e == 1;
}

TensorMap TensorMapCache::tiled(const TiledParams& params) {
  if (!enabled()) return TensorMap::tiled(params);
  const TensorMapDriverArgs args = TensorMap::validate(params);
  thread_local std::array<Entry, 64> entries;
  Entry& e = entries[hash(args) % entries.size()];
  if (e.valid && same(e.args, args)) return e.map;
  TensorMap m = TensorMap::tiled(params);  // validates again: cheap next to the encode
  e.valid = true;
  e.args = args;
  e.map = m;
  return m;
}

}  // namespace nanocuda
