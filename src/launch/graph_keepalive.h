// Per-node attachments carried by CUDA user objects (private to src/launch/graph_definition*.cpp).
#pragma once

#include <cuda.h>

#include <memory>
#include <mutex>
#include <vector>

namespace nanocuda {

using Pins = std::shared_ptr<std::vector<std::shared_ptr<void>>>;

// A CUDA user object holding `pins`, whose one reference `graph` takes: the graph's clones,
// child-graph copies and executables hold it too, and the last of them to go releases the
// pins. nullptr when the driver has no user objects (before CUDA 11.3): the caller keeps them.
[[nodiscard]] CUuserObject pin_to_graph(CUgraph graph, const Pins& pins);
// Gives back `graph`'s reference to `obj` (the node it was for is gone); never throws.
void unpin_from_graph(CUgraph graph, CUuserObject obj) noexcept;

// What a GraphDefinition's Graph runs with: one reference to each user object its definition's
// graphs held at instantiation (or at its last update from a definition), as shared_ptrs that
// release it. The executable holds one user object of its own carrying this.
struct GraphAttachments {
  std::mutex mutex;
  std::vector<std::shared_ptr<void>> items;
};

}  // namespace nanocuda
