// Per-node attachments carried by CUDA user objects (private to src/launch/graph_definition*.cpp).
#pragma once

#include <cuda.h>

#include <memory>
#include <mutex>
#include <vector>

#include "nanocuda/core/stream.h"

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
  // A stream the Graph was launched on since the attachments were last replaced: a nanocuda
  // Stream (watched: it may be closed since) or a foreign stream (its creator keeps it alive).
  struct LaunchedOn {
    CUstream handle;
    std::weak_ptr<const Stream::State> stream;  // empty for a foreign stream
    bool foreign;
  };
  static constexpr std::size_t max_launch_streams = 16;  // more: the old set stays with the Graph

  std::mutex mutex;
  std::vector<std::shared_ptr<void>> items;
  std::vector<LaunchedOn> launched_on;
  bool launched_on_more = false;  // launched on more than max_launch_streams streams
  // Replaced sets that no stream could be asked to release after its launches (a stream closed
  // since, too many streams): kept until the Graph goes (and its launches are done).
  std::vector<std::shared_ptr<void>> retired;
};

// Releases `items` (what a Graph ran with before an update) once every launch queued on
// `launched` (with `more`: on streams not recorded) before now is done: a host function
// queued on each stream drops its share (on a driver thread: it only queues, as user objects'
// destructors do; GraphDefinition::release_dropped frees). What cannot be queued (a stream
// closed since, a driver error: recorded as deferred) joins `keep`'s retired sets instead.
// `context` is made current for the driver calls. Never throws.
void release_after_launches(std::vector<std::shared_ptr<void>> items,
                            const std::vector<GraphAttachments::LaunchedOn>& launched, bool more,
                            const Context& context, GraphAttachments& keep) noexcept;

}  // namespace nanocuda
