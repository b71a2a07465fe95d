// A kernel's tensor-map parameter bound to a template, fed a fresh tensor on every call (the
// seed-000 loop): the descriptor is re-encoded only when the geometry changes, and only its
// address is replaced when just the pointer changes.
#pragma once

#include <nanobind/nanobind.h>

#include <array>
#include <cstdint>

#include "nanocuda/tma/tensor_map.h"

namespace nanocuda::py {

class BoundTensorMap {
 public:
  // `tiled` gives the box and options (and the first geometry); its map is the first value.
  BoundTensorMap(const TiledParams& tiled, const TensorMap& map) : params_(tiled), map_(map) {
    remember(tiled.address, map);
  }

  // The descriptor for `tensor`: the cached bytes when nothing changed, an address swap
  // when only the pointer moved, a full (validated) encode when the geometry changed.
  const TensorMap& update(nanobind::handle tensor, const char* where);

  [[nodiscard]] unsigned encodes() const noexcept { return encodes_; }
  [[nodiscard]] unsigned address_swaps() const noexcept { return swaps_; }

 private:
  void remember(std::uint64_t address, const TensorMap& map) noexcept;

  TiledParams params_;
  TensorMap map_;
  // Descriptors for the last few addresses of the current geometry: loops that rotate
  // through a few buffers (double buffering, a pool of outputs) then swap no address at all.
  struct Recent {
    std::uint64_t address = 0;
    TensorMap map;
  };
  std::array<Recent, 4> recent_{};
  unsigned next_ = 0;
  unsigned encodes_ = 0;
  unsigned swaps_ = 0;
};

}  // namespace nanocuda::py
