// GraphDefinition: an explicit CUDA graph built node by node, re-wired and instantiated
// (cuda.core's GraphDefinition); child graphs and conditional bodies are views sharing its state.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nanocuda/core/device.h"
#include "nanocuda/core/event.h"
#include "nanocuda/launch/graph.h"
#include "nanocuda/launch/graph_complete_options.h"
#include "nanocuda/launch/graph_debug_print_options.h"
#include "nanocuda/launch/launch_config.h"

namespace nanocuda {

class Kernel;

// Where a graph allocation node's memory lives (cuda.core's GraphMemoryType).
enum class GraphMemoryType { Device, Host, Managed };

// A node as it was built here: its type and the parameters given to the driver (pointers
// inside, such as kernel arguments, are the driver's copies' business and are not kept).
struct GraphNodeRecord {
  CUgraphNodeType type{};
  CUgraphNodeParams params{};
  GraphMemoryType memory_type = GraphMemoryType::Device;  // alloc nodes
  std::vector<int> peers;                                 // alloc nodes: peer devices
};

// A copyable reference to one graph of a definition tree. Copies share the graph; a child
// graph's or conditional body's view keeps the whole tree alive; so does every Graph
// instantiated from it (and whatever its nodes were given to keep alive).
class GraphDefinition {
 public:
  using Deps = std::vector<CUgraphNode>;

  // A new empty graph whose work runs on `device` (cuGraphCreate).
  static GraphDefinition create(const Device& device);
  // A view of `graph`, owned elsewhere; `owner` keeps it alive (a builder's, a Graph's).
  static GraphDefinition view(CUgraph graph, std::shared_ptr<void> owner, const Device& device);

  // Each add_* adds one node after `deps` (all nodes of this graph) and returns it.
  CUgraphNode add_empty(const Deps& deps);
  // `args` holds the kernel's packed parameters (the driver copies them). Cluster and
  // cooperative configurations are refused (the driver's kernel node parameters lack them).
  CUgraphNode add_kernel(const Deps& deps, const LaunchConfig& config, const Kernel& kernel,
                         void** args);
  CUgraphNode add_memset(const Deps& deps, CUdeviceptr dst, unsigned value, unsigned element_size,
                         std::size_t width, std::size_t height, std::size_t pitch);
  CUgraphNode add_memcpy(const Deps& deps, CUdeviceptr dst, CUdeviceptr src, std::size_t bytes);
  CUgraphNode add_host(const Deps& deps, CUhostFn fn, void* user_data, std::shared_ptr<void> keepalive);
  CUgraphNode add_event_record(const Deps& deps, const Event& event);
  CUgraphNode add_event_wait(const Deps& deps, const Event& event);
  // The allocation's address is fixed for the graph's life: record(node)->params.alloc.dptr.
  CUgraphNode add_alloc(const Deps& deps, std::size_t bytes, int device, GraphMemoryType type,
                        const std::vector<int>& peers);
  CUgraphNode add_free(const Deps& deps, CUdeviceptr ptr);
  // Embeds a copy of `child` (the driver clones it, with the user objects holding its nodes'
  // attachments): each copied node holds what its original holds, until it is destroyed.
  CUgraphNode add_child(const Deps& deps, const GraphDefinition& child);
  // A conditional node (CUDA 12.4+) with `size` bodies, returned in `bodies`.
  CUgraphNode add_conditional(const Deps& deps, CUgraphConditionalHandle handle,
                              CUgraphConditionalNodeType type, unsigned size,
                              std::vector<GraphDefinition>& bodies);
  // A condition for this tree's conditional nodes; set by device code.
  CUgraphConditionalHandle create_condition(std::optional<unsigned> default_value);
  [[nodiscard]] bool knows_condition(CUgraphConditionalHandle handle) const noexcept;

  // A view of a child-graph node's graph (the node owns it).
  [[nodiscard]] GraphDefinition child_graph(CUgraphNode node) const;
  // Replaces a node's parameters in the definition (cuGraphNodeSetParams), or with `exec`
  // in that executable graph instantiated from it only (cuGraphExecNodeSetParams).
  void set_params(CUgraphNode node, CUgraphNodeParams& params, const char* call,
                  const Graph* exec = nullptr);

  [[nodiscard]] std::vector<CUgraphNode> nodes() const;
  [[nodiscard]] std::vector<std::pair<CUgraphNode, CUgraphNode>> edges() const;
  [[nodiscard]] bool contains(CUgraphNode node) const;
  // Adds / removes the edge from -> to; nanocuda::Error (CUDA_ERROR_INVALID_VALUE, as the
  // driver would say) for a node of another graph, a destroyed one, a self-edge or a cycle.
  void connect(CUgraphNode from, CUgraphNode to, const char* call);
  void disconnect(CUgraphNode from, CUgraphNode to, const char* call);
  // Removes the node and its edges (cuGraphDestroyNode) and releases what it holds; returns
  // the nodes gone with it (itself, and those of its bodies or child copy, recursively).
  std::vector<CUgraphNode> destroy_node(CUgraphNode node);
  [[nodiscard]] static CUgraphNodeType node_type(CUgraphNode node);
  // The node as built here; nullptr for nodes this tree did not add (captured ones).
  [[nodiscard]] const GraphNodeRecord* record(CUgraphNode node) const;

  // Keeps `object` alive as long as `node` (of this graph) and every Graph instantiated while
  // it was there: a CUDA user object per attachment, retained by the node's graph and released
  // when the node is destroyed. Without a node: as long as this graph, its clones and Graphs.
  void keep_alive(std::shared_ptr<void> object, CUgraphNode node = nullptr);
  // Keeps make()'s object alive as keep_alive(object) does (with this graph), once per `key`
  // and graph: a kernel that a thousand nodes run costs one user object, not a thousand.
  void keep_alive_once(const void* key, const std::function<std::shared_ptr<void>()>& make);
  // The Graph holds what the nodes use on its own, not through this tree: when the definition
  // goes (every view of it), so does what only it used.
  [[nodiscard]] Graph instantiate(const GraphCompleteOptions& options = {}) const;
  // Makes `exec` run this definition (Graph::update, same shape); on success `exec` holds what
  // this definition's nodes use instead of what its previous definition's did, so those go
  // when their definition does. On failure nothing changes.
  void update(Graph& exec) const;
  // The driver drops a user object's hold on a thread of its own, where nothing may be
  // released (it may call CUDA): the hold is queued, then freed by release_dropped(), which
  // runs at the next GraphDefinition call and after `hook` (set by the Python face to
  // schedule it on the main thread; the hook itself must not call CUDA or take locks).
  static void set_dropped_hook(void (*hook)()) noexcept;
  static void release_dropped() noexcept;
  void debug_dot_print(const std::string& path, const GraphDebugPrintOptions& options) const;
  [[nodiscard]] std::string topology() const;

  // False once the node owning this graph (a conditional body's, a child clone's) is
  // destroyed: the driver freed the graph, and every call on it raises ValueError.
  [[nodiscard]] bool is_valid() const noexcept;
  [[nodiscard]] CUgraph handle() const noexcept { return graph_; }
  [[nodiscard]] const Device& device() const noexcept;
  // A process-unique number for the tree (root graph, bodies and child views share it).
  [[nodiscard]] std::uint64_t tree_id() const noexcept;
  // What keeps the tree alive (for Graph::update and keepalives).
  [[nodiscard]] std::shared_ptr<void> owner() const noexcept;
  // "GraphDefinition 0x... (3 nodes) on device 0", for errors.
  [[nodiscard]] std::string describe() const;

  struct State;

 private:
  GraphDefinition(std::shared_ptr<State> state, CUgraph graph) noexcept
      : state_(std::move(state)), graph_(graph) {}
  CUgraphNode add(CUgraphNodeParams& params, const Deps& deps, const char* call);
  void require_own(CUgraphNode node, const char* call) const;
  void require_alive(const char* call) const;
  void import_pins(const GraphDefinition& child, CUgraphNode node);
  std::shared_ptr<State> state_;
  CUgraph graph_ = nullptr;
};

}  // namespace nanocuda
