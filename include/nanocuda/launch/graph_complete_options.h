// How GraphBuilder::complete() instantiates a graph (cuda.core's GraphCompleteOptions).
#pragma once

#include <cuda.h>

#include <optional>

#include "nanocuda/core/kept_stream.h"

namespace nanocuda {

struct GraphCompleteOptions {
  bool auto_free_on_launch = false;  // free the graph's unfreed allocations before a relaunch
  std::optional<KeptStream> upload_stream;  // upload right after instantiation, on this stream
  bool device_launch = false;        // launchable from device code (not with auto_free)
  bool use_node_priority = false;    // per-node priorities instead of the stream's

  // The cuGraphInstantiateWithFlags flags; throws ValueError for an illegal combination.
  [[nodiscard]] unsigned long long flags() const;
};

}  // namespace nanocuda
