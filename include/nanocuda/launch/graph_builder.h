// GraphBuilder: builds a CUDA graph by capturing a stream, with forks and joins, child
// graphs, conditional nodes (if / if-else / while / switch) and explicit nodes.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nanocuda/core/event.h"
#include "nanocuda/core/stream_ref.h"
#include "nanocuda/launch/graph.h"
#include "nanocuda/launch/graph_complete_options.h"
#include "nanocuda/launch/graph_debug_print_options.h"

namespace nanocuda {

class GraphDefinition;

// A copyable reference to one builder. Work queued on stream() while the builder is
// building (kernel launches, copies, torch work) becomes nodes of its graph; conditional
// bodies and split() branches are builders of their own, sharing the graph.
class GraphBuilder {
 public:
  enum class Mode { Global, ThreadLocal, Relaxed };  // cuStreamCaptureMode
  enum class Kind { Primary, Forked, Body };          // made by create/on_stream, split, a conditional

  // A builder capturing into a new stream it owns on `device`.
  static GraphBuilder create(const Device& device);
  // A builder capturing `stream` (borrowed; it must not be the legacy default stream).
  static GraphBuilder on_stream(StreamRef stream);

  GraphBuilder& begin_building(Mode mode = Mode::Relaxed);
  // The mode called `name` ("relaxed", "thread_local", "global"); any other throws ValueError
  // showing `shown` (how the caller's language prints the value; default: 'name').
  [[nodiscard]] static Mode mode_from_name(std::string_view name, std::string_view shown = {});
  GraphBuilder& end_building();
  // Instantiates the built graph; the Graph keeps the definition and callbacks alive.
  [[nodiscard]] Graph complete(const GraphCompleteOptions& options = {}) const;

  // `count` builders (this one first) whose streams fork from this one; join them again
  // with join() before end_building().
  std::vector<GraphBuilder> split(std::size_t count);
  // Joins builders of one graph into the first Primary/Body one (else the first given).
  static GraphBuilder join(const std::vector<GraphBuilder>& builders);
  // Adds a finished builder's graph as a child-graph node (the graph is copied).
  void add_child(const GraphBuilder& child);

  // Conditional nodes (CUDA 12.4+). A handle belongs to the graph it was made in; kernels
  // set it with nanocuda::set_conditional (nanocuda/device/graph.cuh).
  CUgraphConditionalHandle create_conditional_handle(std::optional<unsigned> default_value);
  GraphBuilder if_cond(CUgraphConditionalHandle handle);
  std::pair<GraphBuilder, GraphBuilder> if_else(CUgraphConditionalHandle handle);
  GraphBuilder while_loop(CUgraphConditionalHandle handle);
  std::vector<GraphBuilder> switch_(CUgraphConditionalHandle handle, std::size_t count);
  // Whether `handle` may drive a conditional node in this builder's graph (made here or
  // in an enclosing graph).
  [[nodiscard]] bool knows_handle(CUgraphConditionalHandle handle) const noexcept;
  // Whether graph `id` (a graph_id()) is this builder's graph or one enclosing it.
  [[nodiscard]] bool knows_graph(std::uint64_t id) const noexcept;
  // Throws ValueError naming `call` unless knows_graph(id) (a handle made in another graph).
  void require_graph(std::uint64_t id, const char* call) const;

  // Explicit nodes, added after everything built so far on this builder. `dst_bytes` and
  // `src_bytes`, when known (a Buffer's size), are checked: nothing is written past either end.
  void memset(CUdeviceptr dst, unsigned value, unsigned element_size, std::size_t count,
              std::optional<std::size_t> dst_bytes = {});
  void memcpy(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes,
              std::optional<std::size_t> dst_bytes = {}, std::optional<std::size_t> src_bytes = {});
  void host_callback(CUhostFn fn, void* user_data, std::shared_ptr<void> keepalive);
  void record_event(const Event& event);
  void wait_event(const Event& event);
  [[nodiscard]] CUdeviceptr alloc(std::size_t bytes);
  void free(CUdeviceptr ptr);
  // Keeps `object` alive as long as the graph (and every Graph completed from it).
  void keep_alive(std::shared_ptr<void> object);

  void debug_dot_print(const std::string& path, const GraphDebugPrintOptions& options) const;
  // The graph so far (while building: the capture's graph), as GraphTopology::to_string().
  [[nodiscard]] std::string topology() const;

  // Ends a capture in progress (discarding what it captured) and makes the builder
  // unusable; Graphs completed from it keep working. Idempotent. A split() builder still
  // building must be joined first (ValueError).
  void close();
  // close() was called, or join() consumed this split() builder.
  [[nodiscard]] bool is_closed() const noexcept;

  [[nodiscard]] bool is_building() const noexcept;
  // A split() builder not joined yet (cuda.core's rule; the origin builder never is).
  [[nodiscard]] bool is_join_required() const noexcept;
  // Whether both refer to one builder (copies share it).
  [[nodiscard]] bool same_as(const GraphBuilder& other) const noexcept;
  [[nodiscard]] bool is_built() const noexcept;  // end_building() done
  [[nodiscard]] Kind kind() const noexcept;
  [[nodiscard]] StreamRef stream() const noexcept;
  [[nodiscard]] const Device& device() const noexcept;
  // The definition: after end_building(), or a conditional body's graph; else nullptr.
  [[nodiscard]] CUgraph graph() const noexcept;
  // What keeps graph() alive (for Graph::update and keepalives).
  [[nodiscard]] std::shared_ptr<void> definition_owner() const noexcept;
  // graph() as a GraphDefinition view that knows which user object each host-callback node
  // (of this graph and of embedded builders' copies) holds, so destroying the node through the
  // view releases what only it held. Needs graph() (after end_building()).
  [[nodiscard]] GraphDefinition definition_view() const;
  // A process-unique number for the graph tree this builder belongs to.
  [[nodiscard]] std::uint64_t graph_id() const noexcept;
  // "GraphBuilder #3 (primary, building) on Stream 0x... ", for errors.
  [[nodiscard]] std::string describe() const;

  struct Shared;
  struct State;

 private:
  explicit GraphBuilder(std::shared_ptr<State> state) noexcept : state_(std::move(state)) {}
  void require_building(const char* call) const;
  CUgraph capture_graph(const char* call) const;
  CUgraphNode add_node(CUgraphNodeParams& params, const char* call);
  std::vector<GraphBuilder> add_conditional(CUgraphConditionalHandle handle,
                                            CUgraphConditionalNodeType type, unsigned size,
                                            const char* call);
  std::shared_ptr<State> state_;
};

}  // namespace nanocuda
