// GraphBuilder's shared state (private to src/launch/graph_builder*.cpp).
#pragma once

#include <atomic>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph_definition_state.h"
#include "nanocuda/core/kept_stream.h"
#include "nanocuda/driver/unique_handle.h"
#include "nanocuda/launch/graph_builder.h"

namespace nanocuda {

// One per graph: a primary builder's capture, or a conditional body. Every Graph completed
// from it holds it, so the definition and what its nodes use outlive every launch.
struct GraphBuilder::Shared {
  std::uint64_t id = 0;
  Device device;
  std::shared_ptr<Shared> parent;  // a conditional body's enclosing graph
  detail::UniqueHandle<CUgraph, detail::destroy_graph> owned;  // a primary's captured graph
  CUgraph graph = nullptr;           // owned.get(), or a body graph (its parent's node owns it)
  std::vector<std::shared_ptr<void>> keepalive;  // what no node holds (events, child builders with such)
  // The root's: per host-callback node, the user object pinning its data and the graph holding
  // it (in the capture's graph and in embedded builders' copies, whose owners are in owner_of),
  // so a definition_view() can release what a destroyed node held.
  std::unordered_multimap<CUgraphNode, GraphDefinition::State::Pin> pins;
  std::unordered_map<CUgraph, std::pair<CUgraphNode, CUgraph>> owner_of;  // copy -> (node, graph)
  CUgraph captured = nullptr;  // a primary's graph as cuStreamGetCaptureInfo named it
  std::vector<CUgraphConditionalHandle> handles;  // made in this graph
  int open_forks = 0;                // split() builders not joined yet

  explicit Shared(Device d) : device(d) {
    static std::atomic<std::uint64_t> next{1};
    id = next.fetch_add(1, std::memory_order_relaxed);
  }
  // The outermost graph: where keepalives go, since that is what a Graph holds.
  Shared& root() noexcept { return parent ? parent->root() : *this; }
};

struct GraphBuilder::State {
  std::shared_ptr<Shared> shared;
  KeptStream stream;  // keeps a nanocuda Stream alive while the builder lives
  Kind kind = Kind::Primary;
  bool building = false;
  bool built = false;   // end_building() done (or, for a forked builder, joined)
  bool closed = false;  // a forked builder consumed by join(), or close() called
  bool released = false;  // close() called

  // A builder dropped mid-capture (garbage-collected, never ended) ends its capture, so
  // the stream is usable again; never throws (an unexpected driver error is recorded).
  ~State();
  // Ends the capture on `stream`, discarding a primary's partial graph; the driver's result.
  CUresult end_capture() noexcept;
};

}  // namespace nanocuda
