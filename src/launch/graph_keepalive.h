// Per-node attachments carried by CUDA user objects (private to src/launch/graph_definition*.cpp).
#pragma once

#include <cuda.h>

#include <memory>
#include <vector>

namespace nanocuda {

using Pins = std::shared_ptr<std::vector<std::shared_ptr<void>>>;

// A CUDA user object holding `pins`, whose one reference `graph` takes: the graph's clones,
// child-graph copies and executables hold it too, and the last of them to go releases the
// pins. nullptr when the driver has no user objects (before CUDA 11.3): the caller keeps them.
[[nodiscard]] CUuserObject pin_to_graph(CUgraph graph, const Pins& pins);
// Gives back `graph`'s reference to `obj` (the node it was for is gone); never throws.
void unpin_from_graph(CUgraph graph, CUuserObject obj) noexcept;

}  // namespace nanocuda
