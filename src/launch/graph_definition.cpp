// GraphDefinition: explicit nodes through cuGraphAddNode, edges, node records, instantiation.
#include "nanocuda/launch/graph_definition.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "graph_definition_state.h"
#include "graph_keepalive.h"
#include "nanocuda/compile/kernel.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/driver/unique_handle.h"
#include "nanocuda/launch/graph_topology.h"

namespace nanocuda {

GraphDefinition GraphDefinition::create(const Device& device) {
  release_dropped();
  auto state = std::make_shared<State>(device);
  CUgraph g = nullptr;
  NANOCUDA_CALL(cuGraphCreate, "GraphDefinition", &g, 0u);
  state->owned = std::shared_ptr<void>(g, [](void* p) { detail::destroy_graph(static_cast<CUgraph>(p)); });
  return GraphDefinition(std::move(state), g);
}

GraphDefinition GraphDefinition::view(CUgraph graph, std::shared_ptr<void> owner, const Device& device) {
  auto state = std::make_shared<State>(device);
  state->borrowed_owner = std::move(owner);
  return GraphDefinition(std::move(state), graph);
}

const Device& GraphDefinition::device() const noexcept { return state_->device; }
std::uint64_t GraphDefinition::tree_id() const noexcept { return state_->id; }
std::shared_ptr<void> GraphDefinition::owner() const noexcept { return state_; }

std::string GraphDefinition::describe() const {
  std::size_t n = 0;
  if (!is_valid()) return "GraphDefinition (destroyed with its owning node)";
  if (const auto* api = detail::loaded_driver()) (void)api->cuGraphGetNodes(graph_, nullptr, &n);
  char text[96];
  std::snprintf(text, sizeof text, "GraphDefinition %p (%zu nodes) on device %d",
                static_cast<void*>(graph_), n, state_->device.ordinal());
  return text;
}

bool GraphDefinition::is_valid() const noexcept {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->alive(graph_);
}

void GraphDefinition::require_alive(const char* call) const {
  if (!is_valid())
    throw ValueError(std::string(call) + ": this graph was destroyed with the node that owned it "
                     "(a conditional body or an embedded child graph)");
}

void GraphDefinition::require_own(CUgraphNode node, const char* call) const {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    auto it = state_->member_of.find(node);
    if (it != state_->member_of.end() && it->second == graph_) return;
  }
  // Nodes added otherwise (captured, embedded copies): the driver's list. A CUDA error, as
  // cuda.core reports the driver's refusal (CUDAError).
  if (!contains(node))
    throw Error(CUDA_ERROR_INVALID_VALUE, call, describe(),
                "the node is not in this graph (a node of another graph, or a destroyed one)");
}

CUgraphNode GraphDefinition::add(CUgraphNodeParams& params, const Deps& deps, const char* call) {
  require_alive(call);
  for (CUgraphNode d : deps) require_own(d, call);
  // Every node is added with the device's context current, kernel nodes too: naming the context in
  // kernel.ctx alone crashed the H100's driver inside cuGraphAddNode for a just-loaded library
  // kernel (lazy loading needs a current context), and saved nothing measurable.
  CurrentContext guard(*state_->device.context());
  CUgraphNode node = nullptr;
  NANOCUDA_CALL(cuGraphAddNode, [&] { return std::string(call) + " on " + describe(); }, &node,
                graph_, deps.data(), nullptr, deps.size(), &params);
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->member_of[node] = graph_;
  GraphNodeRecord& r = state_->records[node];
  r.type = params.type;
  r.params = params;
  if (params.type == CU_GRAPH_NODE_TYPE_KERNEL) r.params.kernel.kernelParams = nullptr;  // the caller's storage
  return node;
}

CUgraphNode GraphDefinition::add_empty(const Deps& deps) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_EMPTY;
  return add(p, deps, "GraphDefinition::add_empty");
}

CUgraphNode GraphDefinition::add_kernel(const Deps& deps, const LaunchConfig& config,
                                        const Kernel& kernel, void** args) {
  config.validate();
  if (!config.is_simple())
    throw ValueError("GraphDefinition::add_kernel", "kernel nodes take no cluster, cooperative or "
                     "programmatic-dependent-launch configuration (" + config.describe() +
                     "); capture such launches with a GraphBuilder");
  const Context& ctx = *state_->device.context();
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_KERNEL;
  p.kernel.func = kernel.function(ctx);
  p.kernel.gridDimX = config.grid.x;
  p.kernel.gridDimY = config.grid.y;
  p.kernel.gridDimZ = config.grid.z;
  p.kernel.blockDimX = config.block.x;
  p.kernel.blockDimY = config.block.y;
  p.kernel.blockDimZ = config.block.z;
  p.kernel.sharedMemBytes = config.shared_mem;
  p.kernel.kernelParams = args;
  return add(p, deps, "GraphDefinition::add_kernel");
}

CUgraphNode GraphDefinition::add_memset(const Deps& deps, CUdeviceptr dst, unsigned value,
                                        unsigned element_size, std::size_t width,
                                        std::size_t height, std::size_t pitch) {
  if (element_size != 1 && element_size != 2 && element_size != 4)
    throw ValueError("GraphDefinition::add_memset", "the value must be 1, 2 or 4 bytes, got " +
                     std::to_string(element_size));
  if (height > 1 && pitch < width * element_size)
    throw ValueError("GraphDefinition::add_memset", "pitch " + std::to_string(pitch) +
                     " is less than a row (" + std::to_string(width * element_size) + " bytes)");
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEMSET;
  p.memset.dst = dst;
  p.memset.value = value;
  p.memset.elementSize = element_size;
  p.memset.width = width;
  p.memset.height = height;
  p.memset.pitch = height > 1 ? pitch : 0;
  p.memset.ctx = state_->device.context()->handle();
  return add(p, deps, "GraphDefinition::add_memset");
}

CUgraphNode GraphDefinition::add_memcpy(const Deps& deps, CUdeviceptr dst, CUdeviceptr src,
                                        std::size_t bytes) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
  p.memcpy.copyCtx = state_->device.context()->handle();
  CUDA_MEMCPY3D& c = p.memcpy.copyParams;
  c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;  // the driver tells device from pinned host
  c.srcDevice = src;
  c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  c.dstDevice = dst;
  c.WidthInBytes = bytes;
  c.Height = 1;
  c.Depth = 1;
  return add(p, deps, "GraphDefinition::add_memcpy");
}

CUgraphNode GraphDefinition::add_host(const Deps& deps, CUhostFn fn, void* user_data,
                                      std::shared_ptr<void> keepalive) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_HOST;
  p.host.fn = fn;
  p.host.userData = user_data;
  CUgraphNode node = add(p, deps, "GraphDefinition::add_host");
  if (keepalive) keep_alive(std::move(keepalive), node);
  return node;
}

CUgraphNode GraphDefinition::add_event_record(const Deps& deps, const Event& event) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
  p.eventRecord.event = event.checked_handle("GraphDefinition::add_event_record");
  CUgraphNode node = add(p, deps, "GraphDefinition::add_event_record");
  event.note_recorded();
  return node;
}

CUgraphNode GraphDefinition::add_event_wait(const Deps& deps, const Event& event) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
  p.eventWait.event = event.checked_handle("GraphDefinition::add_event_wait");
  return add(p, deps, "GraphDefinition::add_event_wait");
}

CUgraphNode GraphDefinition::add_alloc(const Deps& deps, std::size_t bytes, int device,
                                       GraphMemoryType type, const std::vector<int>& peers) {
  if (bytes == 0)  // the driver's error, as cuda.core reports it (CUDAError), with the reason
    throw Error(CUDA_ERROR_INVALID_VALUE, "GraphDefinition::add_alloc", describe(),
                "size must be positive, got 0");
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  CUmemPoolProps& props = p.alloc.poolProps;
  props.allocType = type == GraphMemoryType::Managed ? CU_MEM_ALLOCATION_TYPE_MANAGED
                                                     : CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = type == GraphMemoryType::Host ? CU_MEM_LOCATION_TYPE_HOST
                                                      : CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = type == GraphMemoryType::Host ? 0 : device;
  std::vector<CUmemAccessDesc> access(peers.size());
  for (std::size_t i = 0; i < peers.size(); ++i) {
    access[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access[i].location.id = peers[i];
    access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  p.alloc.accessDescs = access.empty() ? nullptr : access.data();
  p.alloc.accessDescCount = access.size();
  p.alloc.bytesize = bytes;
  CUgraphNode node = add(p, deps, "GraphDefinition::add_alloc");
  std::lock_guard<std::mutex> lock(state_->mutex);
  GraphNodeRecord& r = state_->records[node];
  r.params.alloc.accessDescs = nullptr;
  r.memory_type = type;
  r.peers = peers;
  return node;
}

CUgraphNode GraphDefinition::add_free(const Deps& deps, CUdeviceptr ptr) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
  p.free.dptr = ptr;
  return add(p, deps, "GraphDefinition::add_free");
}

CUgraphNode GraphDefinition::add_child(const Deps& deps, const GraphDefinition& child) {
  if (child.state_ == state_)
    throw ValueError("GraphDefinition::add_child", "a graph cannot embed a graph of its own tree");
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_GRAPH;
  p.graph.graph = child.graph_;
  CUgraphNode node = add(p, deps, "GraphDefinition::add_child");
  import_pins(child, node);  // the copy's nodes hold what the child's nodes hold
  return node;
}

CUgraphConditionalHandle GraphDefinition::create_condition(std::optional<unsigned> default_value) {
  require_alive("GraphDefinition::create_condition");
  CUgraphConditionalHandle h = 0;
  NANOCUDA_CALL(cuGraphConditionalHandleCreate, [&] { return describe(); }, &h, graph_,
                state_->device.context()->handle(), default_value.value_or(0),
                default_value ? CU_GRAPH_COND_ASSIGN_DEFAULT : 0u);
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->conditions.push_back(h);
  return h;
}

bool GraphDefinition::knows_condition(CUgraphConditionalHandle handle) const noexcept {
  std::lock_guard<std::mutex> lock(state_->mutex);
  for (auto h : state_->conditions)
    if (h == handle) return true;
  return false;
}

CUgraphNode GraphDefinition::add_conditional(const Deps& deps, CUgraphConditionalHandle handle,
                                             CUgraphConditionalNodeType type, unsigned size,
                                             std::vector<GraphDefinition>& bodies) {
  const char* call = type == CU_GRAPH_COND_TYPE_WHILE ? "GraphDefinition::while_loop"
                     : type == CU_GRAPH_COND_TYPE_SWITCH ? "GraphDefinition::switch"
                                                         : "GraphDefinition::if_then";
  if (!knows_condition(handle))
    throw Error(CUDA_ERROR_INVALID_VALUE, call, describe(),
                "the condition was not made by create_condition() of this graph");
  std::vector<CUgraph> out(size ? size : 1, nullptr);
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = handle;
  p.conditional.type = type;
  p.conditional.size = size;
  p.conditional.phGraph_out = out.data();
  p.conditional.ctx = state_->device.context()->handle();
  CUgraphNode node = add(p, deps, call);
  // The driver points phGraph_out at its own array of body graphs (CUDA-owned, valid while the
  // node lives); a driver that fills the array it was given leaves the pointer as it was.
  const CUgraph* made = p.conditional.phGraph_out ? p.conditional.phGraph_out : out.data();
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->records[node].params.conditional.phGraph_out = nullptr;
  }
  bodies.clear();
  std::lock_guard<std::mutex> lock(state_->mutex);
  for (unsigned i = 0; i < size; ++i) {
    state_->owner_of[made[i]] = {node, graph_};
    bodies.push_back(GraphDefinition(state_, made[i]));
  }
  return node;
}

GraphDefinition GraphDefinition::child_graph(CUgraphNode node) const {
  require_own(node, "GraphDefinition::child_graph");
  CUgraph g = nullptr;
  NANOCUDA_CALL(cuGraphChildGraphNodeGetGraph, [&] { return describe(); }, node, &g);
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->owner_of[g] = {node, graph_};
  return GraphDefinition(state_, g);
}

void GraphDefinition::set_params(CUgraphNode node, CUgraphNodeParams& params, const char* call,
                                 const Graph* exec) {
  require_own(node, call);
  CurrentContext guard(*state_->device.context());
  if (exec) {
    NANOCUDA_CALL(cuGraphExecNodeSetParams,
                  [&] { return std::string(call) + " on " + exec->describe(); }, exec->exec_handle(),
                  node, &params);
    return;  // the definition keeps its parameters
  }
  NANOCUDA_CALL(cuGraphNodeSetParams, [&] { return std::string(call) + " on " + describe(); },
                node, &params);
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto it = state_->records.find(node);
  if (it != state_->records.end()) it->second.params = params;
}

std::vector<CUgraphNode> GraphDefinition::nodes() const {
  require_alive("GraphDefinition::nodes");
  std::size_t n = 0;
  NANOCUDA_CALL(cuGraphGetNodes, [&] { return describe(); }, graph_, nullptr, &n);
  std::vector<CUgraphNode> out(n);
  if (n) NANOCUDA_CALL(cuGraphGetNodes, [&] { return describe(); }, graph_, out.data(), &n);
  out.resize(n);
  return out;
}

std::vector<std::pair<CUgraphNode, CUgraphNode>> GraphDefinition::edges() const {
  require_alive("GraphDefinition::edges");
  std::size_t n = 0;
  NANOCUDA_CALL(cuGraphGetEdges, [&] { return describe(); }, graph_, nullptr, nullptr, nullptr, &n);
  std::vector<CUgraphNode> from(n), to(n);
  if (n)
    NANOCUDA_CALL(cuGraphGetEdges, [&] { return describe(); }, graph_, from.data(), to.data(),
                  nullptr, &n);
  std::vector<std::pair<CUgraphNode, CUgraphNode>> out;
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(from[i], to[i]);
  return out;
}

bool GraphDefinition::contains(CUgraphNode node) const {
  for (CUgraphNode n : nodes())
    if (n == node) return true;
  return false;
}

namespace {
// Whether `to` can be reached from `from` along `edges` (from == to: true).
bool reaches(const std::vector<std::pair<CUgraphNode, CUgraphNode>>& edges, CUgraphNode from, CUgraphNode to) {
  std::vector<CUgraphNode> todo{from};
  std::unordered_set<CUgraphNode> seen;
  while (!todo.empty()) {
    CUgraphNode n = todo.back();
    todo.pop_back();
    if (n == to) return true;
    if (!seen.insert(n).second) continue;
    for (const auto& [a, b] : edges)
      if (a == n) todo.push_back(b);
  }
  return false;
}
}  // namespace

void GraphDefinition::connect(CUgraphNode from, CUgraphNode to, const char* call) {
  require_own(from, call);
  require_own(to, call);
  if (from == to)
    throw Error(CUDA_ERROR_INVALID_VALUE, call, describe(), "a node cannot depend on itself");
  // A cycle would be refused only at instantiation, far from its cause: refused here, naming
  // both nodes (the labels are read only then).
  if (reaches(edges(), to, from)) {
    GraphTopology t = GraphTopology::read(graph_);
    std::size_t a = t.index_of(from), b = t.index_of(to);
    throw Error(CUDA_ERROR_INVALID_VALUE, call, describe(),
                "an edge from node [" + std::to_string(a) + "] " + t.nodes[a].label + " to node [" +
                    std::to_string(b) + "] " + t.nodes[b].label + " would make a cycle ([" + std::to_string(b) +
                    "] already leads to [" + std::to_string(a) + "]); a graph's edges must not loop");
  }
  NANOCUDA_CALL(cuGraphAddDependencies, [&] { return std::string(call) + " on " + describe(); },
                graph_, &from, &to, nullptr, std::size_t{1});
}

void GraphDefinition::disconnect(CUgraphNode from, CUgraphNode to, const char* call) {
  require_own(from, call);
  require_own(to, call);
  NANOCUDA_CALL(cuGraphRemoveDependencies, [&] { return std::string(call) + " on " + describe(); },
                graph_, &from, &to, nullptr, std::size_t{1});
}

CUgraphNodeType GraphDefinition::node_type(CUgraphNode node) {
  CUgraphNodeType t{};
  NANOCUDA_CALL(cuGraphNodeGetType, "GraphNode", node, &t);
  return t;
}

const GraphNodeRecord* GraphDefinition::record(CUgraphNode node) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto it = state_->records.find(node);
  return it == state_->records.end() ? nullptr : &it->second;  // stable: node-based map
}

void GraphDefinition::debug_dot_print(const std::string& path,
                                      const GraphDebugPrintOptions& options) const {
  require_alive("GraphDefinition::debug_dot_print");
  NANOCUDA_CALL(cuGraphDebugDotPrint, [&] { return describe() + ", writing '" + path + "'"; },
                graph_, path.c_str(), options.flags());
}

std::string GraphDefinition::topology() const {
  require_alive("GraphDefinition::topology");
  return GraphTopology::read(graph_).to_string();
}

}  // namespace nanocuda
