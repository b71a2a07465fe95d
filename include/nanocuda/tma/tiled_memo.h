// Per-thread memory of the last tiled geometry encoded and its descriptors for recent
// addresses, so re-encoding a known map skips validation and, often, the driver.
//
// cuTensorMapEncodeTiled is a pure function of its arguments: loops that rebuild the same
// maps every call (seed 001/000) get the driver's own earlier bytes back, and a new address
// of a known geometry costs one cuTensorMapReplaceAddress on a copy (byte-identical to a
// fresh encode; test_tensor_map_gpu checks both against the raw driver call).
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>

#include "nanocuda/tma/tensor_map.h"

namespace nanocuda::detail {

class TiledMemo {
 public:
  [[nodiscard]] static TiledMemo& for_this_thread() noexcept;

  // True when `p` differs from the remembered geometry at most in its address, and that
  // address satisfies the geometry's alignment rule (so `p` is valid without re-checking).
  [[nodiscard]] bool same_geometry(const TiledParams& p) const noexcept;
  // The remembered descriptor for `address` made in `context`, or nullptr.
  [[nodiscard]] const CUtensorMap* find(std::uint64_t address, CUcontext context) const noexcept;
  // The newest descriptor of the geometry (any address), or nullptr if made in another context.
  [[nodiscard]] const CUtensorMap* latest(CUcontext context) const noexcept;

  // The remembered geometry's descriptor at `address`, into `out`: a remembered one, or an
  // address swap on a copy of the newest (cuTensorMapReplaceAddress), in the current
  // context. False, with `out` untouched, when nothing is remembered, the address breaks
  // the geometry's alignment rule, or the descriptors were made in another context: the
  // caller then takes the full path (validate, encode, start).
  bool at(std::uint64_t address, CUtensorMap& out);

  // A new geometry (forgets the old one's descriptors), or a new address of the same one.
  void start(const TiledParams& p, const TensorMapDriverArgs& args, CUcontext context,
             const CUtensorMap& map) noexcept;
  void add(std::uint64_t address, const CUtensorMap& map) noexcept;

  // Changes whenever the remembered geometry does; unique in the process, so a caller that
  // saw this memo hold a geometry can later skip same_geometry() while it is unchanged.
  [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }

  // Forgets everything (tests; a context being destroyed does not need it: the memo keys on
  // the context handle and a descriptor does not reference the context).
  void clear() noexcept {
    valid_ = false;
    generation_ = 0;
  }

  // What TensorMap::tiled did on this thread: full encodes, address swaps, reuses (tests).
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
