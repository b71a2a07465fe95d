// Keepalives pinned to a CUDA graph by a user object (private to src/launch/graph_definition*.cpp).
#pragma once

#include <cuda.h>

#include <memory>
#include <vector>

namespace nanocuda {

using Pins = std::shared_ptr<std::vector<std::shared_ptr<void>>>;

// Makes `graph` (and its future clones and executables) hold `pins`; best effort: a driver
// without user objects (before CUDA 11.3) keeps the plain rule (the definition holds them).
void pin_to_graph(CUgraph graph, const Pins& pins);

}  // namespace nanocuda
