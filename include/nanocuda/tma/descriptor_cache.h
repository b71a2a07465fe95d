// The one cache of tiled TMA descriptors: the last geometry validated and encoded, its
// descriptors for recent addresses, and the address swap that makes a new one.
//
// cuTensorMapEncodeTiled is a pure function of its arguments: loops that rebuild the same
// maps every call (seed 001/000) get the driver's own earlier bytes back, and a new address
// of a known geometry costs one cuTensorMapReplaceAddress on a copy (byte-identical to a
// fresh encode; test_tensor_map_gpu checks both against the raw driver call).
//
// Two owners, no locks: TensorMap::tiled keeps one per thread (for_this_thread), keyed on
// the current context; a bound tensor-map parameter (BoundTensorMap) keeps its own, keyed
// on no context (kAnyContext), used by one caller at a time.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>

#include "nanocuda/tma/tensor_geometry.h"
#include "nanocuda/tma/tensor_map.h"

namespace nanocuda::detail {

class DescriptorCache {
 public:
  // The context key of a cache whose descriptors serve whatever context is current.
  static constexpr CUcontext kAnyContext = nullptr;

  // TensorMap::tiled's cache on this thread.
  [[nodiscard]] static DescriptorCache& for_this_thread() noexcept;

  // True when `p` differs from the remembered geometry at most in its address, and that
  // address satisfies the geometry's alignment rule (so `p` is valid without re-checking).
  [[nodiscard]] bool same_geometry(const TiledParams& p) const noexcept;
  // The tensor half of that test (dtype, shape, strides, address rule), for an owner whose
  // box and options never change (a bound parameter's template).
  [[nodiscard]] bool same_tensor(const TensorGeometry& t) const noexcept {
    const TiledParams& g = geometry_;
    if (!valid_ || t.rank != g.rank || t.dtype != g.dtype || (t.ptr & (address_align_ - 1)) != 0)
      return false;
    std::uint64_t diff = 0;
    for (std::uint32_t i = 0; i < t.rank && i < kTensorMapMaxRank; ++i)
      diff |= (t.shape[i] ^ g.shape[i]) | (t.strides[i] ^ g.strides[i]);
    return diff == 0;
  }
  // The remembered descriptor for `address` made under `context`, or nullptr. (Inline, like
  // latest and add: they sit on every hit path.)
  [[nodiscard]] const CUtensorMap* find(std::uint64_t address, CUcontext context) const noexcept {
    if (context != context_) return nullptr;
    for (unsigned i = 0; i < count_; ++i)  // oldest first: a bound map's template is slot 0
      if (recent_[i].address == address) return &recent_[i].map;
    return nullptr;
  }
  // The newest descriptor of the geometry (any address), or nullptr if made under another key.
  [[nodiscard]] const CUtensorMap* latest(CUcontext context) const noexcept {
    return context == context_ && count_ ? &recent_[newest_].map : nullptr;
  }

  // The remembered geometry's descriptor at `address`, into `out`: a remembered one, or an
  // address swap on a copy of the newest, in the current context (made current if none).
  // False, with `out` untouched, when nothing is remembered, the address breaks the
  // geometry's alignment rule, or the descriptors were made in another context: the caller
  // then takes the full path (encode). The per-thread path of TensorMap::tiled.
  bool at(std::uint64_t address, CUtensorMap& out);

  // The newest descriptor made under `context` with `address` swapped in
  // (cuTensorMapReplaceAddress; needs a current context), remembered and returned; nullptr,
  // with nothing done, when there is none.
  const CUtensorMap* swap(std::uint64_t address, CUcontext context);
  // Validates `p` (throwing before anything changes), encodes it (needs a current context)
  // and starts remembering it under the current context (keyed_on_context) or kAnyContext.
  const CUtensorMap& encode(const TiledParams& p, bool keyed_on_context);

  // A new geometry (forgets the old one's descriptors), or a new address of the same one.
  void start(const TiledParams& p, CUcontext context, const CUtensorMap& map) noexcept;
  void add(std::uint64_t address, const CUtensorMap& map) noexcept {
    newest_ = count_ < recent_.size() ? count_++ : (newest_ + 1) % recent_.size();
    recent_[newest_] = Recent{address, map};
  }

  // Changes whenever the remembered geometry does; unique in the process, so a caller that
  // saw this cache hold a geometry can later skip same_geometry() while it is unchanged.
  [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }

  // Forgets everything (tests; a context being destroyed does not need it: the cache keys on
  // the context handle and a descriptor does not reference the context).
  void clear() noexcept {
    valid_ = false;
    generation_ = 0;
  }

  // What this cache did: full encodes, address swaps, reuses (tests).
  struct Stats {
    unsigned long long encodes = 0, address_swaps = 0, reuses = 0;
  };
  Stats stats;

 private:
  struct Recent {
    std::uint64_t address = 0;
    CUtensorMap map{};
  };
  bool valid_ = false;
  std::uint64_t generation_ = 0;  // 0: nothing remembered
  std::uint64_t address_align_ = 16;
  CUcontext context_ = nullptr;
  TiledParams geometry_{};
  // A few addresses: loops rotate through a handful of buffers (A/B/C, double buffering).
  std::array<Recent, 4> recent_{};
  unsigned count_ = 0;
  unsigned newest_ = 0;
};

}  // namespace nanocuda::detail
