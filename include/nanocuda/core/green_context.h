// SM resources of a device, their splits, and green contexts made from them (CUDA 12.4).
#pragma once

#include <cuda.h>

#include <memory>
#include <vector>

#include "nanocuda/core/context.h"
#include "nanocuda/core/device.h"

namespace nanocuda {

// A set of SMs: a whole device's, a green context's, or one group (or the remainder) of a
// split. A dry-run group only describes a split; a green context refuses it.
struct SmResource {
  CUdevResource raw{};
  int device_ordinal = 0;
  bool dry_run = false;

  [[nodiscard]] unsigned sm_count() const noexcept { return raw.sm.smCount; }
  // The smallest group a split makes and the granularity of group sizes. Drivers older than
  // the 13.0 resource ABI leave these 0; the architecture's documented values are used then.
  [[nodiscard]] unsigned min_partition_size() const;
  [[nodiscard]] unsigned coscheduled_alignment() const;
};

// All SMs of `device` (cuDeviceGetDevResource).
[[nodiscard]] SmResource device_sm_resource(const Device& device);

// The SMs a context runs on: its partition for a green context, the device's otherwise.
[[nodiscard]] SmResource context_sm_resource(const Context& context);

struct SmSplit {
  std::vector<SmResource> groups;
  SmResource remainder;
};

// Splits `input` into `groups` groups of at least `min_count` SMs each (the driver rounds
// up to min_partition_size and the alignment; 0 means the smallest group); `flags` are
// CUdevSmResourceSplit_flags. Groups that do not fit in `input` throw the driver's
// CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION (as cuda.core's split does), naming the sizes.
[[nodiscard]] SmSplit split_sm_resource(const SmResource& input, unsigned groups, unsigned min_count,
                                        unsigned flags = 0, bool dry_run = false);

// A green context on `device` running on exactly `resources` (disjoint SM groups of it).
// Throws ValueError for an empty list, a dry-run group or a group of another device.
[[nodiscard]] Context create_green_context(const Device& device, const std::vector<SmResource>& resources);

namespace detail {

// Owns a CUgreenCtx, destroyed when the last Context copy (a stream's, a buffer's) goes, or
// at Context::close() when nothing else holds it; `closed` is what close() says to every copy.
struct GreenContextState {
  CUgreenCtx handle = nullptr;
  int ordinal = 0;
  bool closed = false;
  CUcontext context = nullptr;  // its cuCtxFromGreenCtx view, never left current once destroyed
  GreenContextState(CUgreenCtx h, int o) noexcept : handle(h), ordinal(o) {}
  ~GreenContextState();
  GreenContextState(const GreenContextState&) = delete;
  GreenContextState& operator=(const GreenContextState&) = delete;
};

}  // namespace detail

}  // namespace nanocuda
