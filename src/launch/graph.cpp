// Graph capture, instantiation, replay, upload, whole-graph and kernel-argument update.
#include "nanocuda/launch/graph.h"

#include <cstdio>

#include "graph_keepalive.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/launch/detail/launch_context.h"
#include "nanocuda/launch/graph_topology.h"

namespace nanocuda {

namespace detail {
void destroy_graph(CUgraph g) noexcept {
  if (const auto* api = loaded_driver())
    if (CUresult rc = api->cuGraphDestroy(g); rc != CUDA_SUCCESS)
      record_deferred_error(rc, "cuGraphDestroy", "Graph");
}
void destroy_graph_exec(CUgraphExec g) noexcept {
  if (const auto* api = loaded_driver())
    if (CUresult rc = api->cuGraphExecDestroy(g); rc != CUDA_SUCCESS)
      record_deferred_error(rc, "cuGraphExecDestroy", "Graph");
}
}  // namespace detail

unsigned long long GraphCompleteOptions::flags() const {
  if (auto_free_on_launch && device_launch)
    throw ValueError("GraphCompleteOptions: auto_free_on_launch and device_launch cannot be "
                     "combined (the driver forbids it)");
  unsigned long long f = 0;
  if (auto_free_on_launch) f |= CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH;
  if (device_launch) f |= CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH;
  if (use_node_priority) f |= CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
  return f;
}

void Graph::begin_capture(StreamRef stream) {
  CurrentContext guard(stream.context());
  if (!stream.views_owned_stream() && stream.raw_handle() == CU_STREAM_LEGACY)
    throw ValueError("Graph::begin_capture", "the legacy default stream cannot be captured; use a "
                     "nanocuda.Stream");
  NANOCUDA_CALL(cuStreamBeginCapture, [&] { return stream.describe(); }, stream.handle(),
                CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
}

Graph Graph::end_capture(StreamRef stream) {
  CurrentContext guard(stream.context());
  CUgraph graph = nullptr;
  NANOCUDA_CALL(cuStreamEndCapture, [&] { return stream.describe(); }, stream.handle(), &graph);
  std::shared_ptr<void> owner(graph, [](void* g) { detail::destroy_graph(static_cast<CUgraph>(g)); });
  return instantiate(graph, std::move(owner), stream.device());
}

Graph Graph::instantiate(CUgraph graph, std::shared_ptr<void> owner, const Device& device,
                         const GraphCompleteOptions& options) {
  unsigned long long flags = options.flags();
  CurrentContext guard(*device.context());
  CUgraphExec exec = nullptr;
  NANOCUDA_CALL(cuGraphInstantiateWithFlags,
                [&] { return "graph " + GraphTopology::read(graph).to_string(); }, &exec, graph,
                flags);
  Graph g(graph, std::move(owner), exec, device);
  if (options.upload_stream) g.upload(*options.upload_stream);
  return g;
}

Graph::Graph(CUgraph graph, std::shared_ptr<void> owner, CUgraphExec exec, Device device)
    : graph_(graph), exec_(exec), device_(device), context_(device.context()) {
  owners_.push_back(std::move(owner));
  NANOCUDA_CALL(cuGraphGetNodes, [&] { return describe(); }, graph, nullptr, &node_count_);
}

// Reads the kernel nodes of `graph` with their parameter layouts. With keep_handles (after
// an update from another definition) the node handles stay those of the original graph,
// which is what the executable graph's per-node calls are keyed by.
void Graph::read_kernel_nodes(CUgraph graph, bool keep_handles) const {
  const auto& api = detail::driver();
  std::size_t n = 0;
  NANOCUDA_CALL(cuGraphGetNodes, [&] { return describe(); }, graph, nullptr, &n);
  std::vector<CUgraphNode> nodes(n);
  if (n) NANOCUDA_CALL(cuGraphGetNodes, [&] { return describe(); }, graph, nodes.data(), &n);
  std::vector<GraphKernelNode> kernels;
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type{};
    NANOCUDA_CALL(cuGraphNodeGetType, [&] { return describe(); }, node, &type);
    if (type != CU_GRAPH_NODE_TYPE_KERNEL) continue;
    GraphKernelNode k;
    k.node = node;
    NANOCUDA_CALL(cuGraphKernelNodeGetParams, [&] { return describe(); }, node, &k.params);
    // The layout comes from the function itself, so updates are checked like launches.
    for (std::size_t i = 0;; ++i) {
      std::size_t offset = 0, size = 0;
      CUresult rc = api.cuFuncGetParamInfo(k.params.func, i, &offset, &size);
      if (rc == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
      detail::check(rc, "cuFuncGetParamInfo", [&] { return describe(); });
      k.layout.params.push_back({static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(size)});
    }
    const char* name = nullptr;
    if (api.cuFuncGetName && api.cuFuncGetName(&name, k.params.func) == CUDA_SUCCESS && name)
      k.name = name;
    else
      k.name = "kernel node " + std::to_string(kernels.size());
    if (keep_handles && kernels.size() < kernels_.size()) k.node = kernels_[kernels.size()].node;
    kernels.push_back(std::move(k));
  }
  node_args_.clear();  // they point into the old kernels_
  kernels_ = std::move(kernels);
  kernels_read_ = true;
}

void Graph::launch(StreamRef stream) const {
  CUstream handle = stream.handle();
  NANOCUDA_CALL(cuGraphLaunch, [&] { return describe() + " on " + stream.describe(); },
                exec_.get(), handle);
  if (handle != last_launch_.handle.load(std::memory_order_relaxed)) [[unlikely]]
    note_launch_stream(stream);
}

// Off the replay path: a stream other than the last one. Only a GraphDefinition's Graph has a
// set of attachments that an update replaces, so only it keeps the list.
void Graph::note_launch_stream(StreamRef stream) const {
  last_launch_.handle.store(stream.raw_handle(), std::memory_order_relaxed);
  if (!attachments_) return;
  auto state = std::static_pointer_cast<const Stream::State>(stream.shared_state());
  std::lock_guard<std::mutex> lock(attachments_->mutex);
  auto& seen = attachments_->launched_on;
  for (const auto& s : seen)
    if (s.handle == stream.raw_handle() && s.foreign == !state && s.stream.lock() == state) return;
  if (seen.size() < GraphAttachments::max_launch_streams)
    seen.push_back({stream.raw_handle(), state, !state});
  else
    attachments_->launched_on_more = true;
}

CUresult Graph::launch_unchecked(CUstream stream) const noexcept {
  return detail::driver().cuGraphLaunch(exec_.get(), stream);
}

void Graph::upload(StreamRef stream) const {
  NANOCUDA_CALL(cuGraphUpload, [&] { return describe() + " on " + stream.describe(); },
                exec_.get(), stream.handle());
}

void Graph::set_node_enabled(CUgraphNode node, bool enabled) {
  CurrentContext guard(*context_);
  NANOCUDA_CALL(cuGraphNodeSetEnabled, [&] { return describe(); }, exec_.get(), node,
                enabled ? 1u : 0u);
}

bool Graph::node_enabled(CUgraphNode node) const {
  CurrentContext guard(*context_);
  unsigned on = 0;
  NANOCUDA_CALL(cuGraphNodeGetEnabled, [&] { return describe(); }, exec_.get(), node, &on);
  return on != 0;
}

detail::KernelNodeArgs::KernelNodeArgs(const GraphKernelNode& node)
    : params(node.params),
      buffer(node.layout),
      packer(node.layout, node.name, buffer.data(), buffer.pointers()) {
  params.kernelParams = buffer.pointers();
  params.extra = nullptr;
}

detail::KernelNodeArgs& Graph::make_node_args(std::size_t index) {
  const auto& kernels = kernel_nodes();
  if (index >= kernels.size()) [[unlikely]] throw_no_kernel_node(index);
  if (node_args_.size() != kernels.size()) node_args_.resize(kernels.size());
  if (!node_args_[index]) node_args_[index] = std::make_unique<detail::KernelNodeArgs>(kernels[index]);
  return *node_args_[index];
}

bool Graph::is_packing() const noexcept {
  for (const auto& a : node_args_)
    if (a && a->busy) return true;
  return false;
}

void Graph::refuse_while_packing(const char* call) const {
  if (is_packing())
    throw ValueError(call, describe() + " is packing the arguments of a kernel-node update (an argument's "
                     "conversion called back into the graph); the graph cannot change until it is done");
}

void Graph::set_kernel_params(std::size_t index, void** params) {
  (void)kernel_nodes();
  if (index >= kernels_.size()) [[unlikely]] throw_no_kernel_node(index);
  CUDA_KERNEL_NODE_PARAMS p = kernels_[index].params;
  p.kernelParams = params;
  p.extra = nullptr;
  set_packed_params(index, p);
}

// The C++ loop's one call (bench graphs: cpp_graph_update), after the launch policy's context
// check: the H100's driver segfaults in cuGraphExecKernelNodeSetParams when no context is
// current (test_graph_exec_update_gpu's thread case), so the call is never made without one.
void Graph::set_packed_params(std::size_t index, const CUDA_KERNEL_NODE_PARAMS& params) {
  make_launch_context_current(context_->handle());
  NANOCUDA_CALL(cuGraphExecKernelNodeSetParams,
                [&] { return describe() + ", kernel node " + std::to_string(index) + " ('" + kernels_[index].name + "')"; },
                exec_.get(), kernels_[index].node, &params);
}

void Graph::throw_no_kernel_node(std::size_t index) const {
  throw ValueError(describe() + ": no kernel node " + std::to_string(index) + " (the graph has " +
                   std::to_string(kernels_.size()) + ")");
}

std::size_t Graph::kernel_index(CUgraphNode node, const char* call) const {
  const auto& kernels = kernel_nodes();
  for (std::size_t i = 0; i < kernels.size(); ++i)
    if (kernels[i].node == node) return i;
  char text[64];
  std::snprintf(text, sizeof text, "node %p", static_cast<void*>(node));
  throw ValueError(call, std::string(text) + " is not a kernel node of " + describe() +
                             " (a node of another graph definition, or not a kernel node)");
}

void Graph::set_kernel_node(std::size_t index, const CUDA_KERNEL_NODE_PARAMS& params, ParamLayout layout,
                            std::string name) {
  (void)kernel_nodes();
  if (index >= kernels_.size()) throw_no_kernel_node(index);
  refuse_while_packing("Graph::set_kernel_node");
  CUDA_KERNEL_NODE_PARAMS p = params;
  p.extra = nullptr;
  CurrentContext guard(*context_);
  NANOCUDA_CALL(cuGraphExecKernelNodeSetParams,
                [&] { return describe() + ", kernel node " + std::to_string(index) + " ('" + name + "')"; },
                exec_.get(), kernels_[index].node, &p);
  GraphKernelNode& k = kernels_[index];
  k.params = p;
  k.params.kernelParams = nullptr;  // the caller's storage: not kept
  k.layout = std::move(layout);
  k.name = std::move(name);
  if (index < node_args_.size()) node_args_[index].reset();  // packed against the old layout
}

namespace {
const char* update_result_text(CUgraphExecUpdateResult r) {
  switch (r) {
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: return "the topology differs (nodes or edges added or removed)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: return "a node's type differs";
    case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED: return "a kernel node's function changed in a way that cannot be updated";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED: return "a node's parameters changed in a way that cannot be updated";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED: return "a node cannot be updated (e.g. memory or conditional nodes changed)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE: return "a kernel node's function changed to an unsupported one";
    case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED: return "a node's attributes changed";
    default: return "the driver refused the update";
  }
}
}  // namespace

void Graph::update(CUgraph source, std::shared_ptr<void> owner) {
  refuse_while_packing("Graph::update");
  CurrentContext guard(*context_);
  CUgraphExecUpdateResultInfo info{};
  CUresult rc = detail::driver().cuGraphExecUpdate(exec_.get(), source, &info);
  if (rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) {
    GraphTopology mine = GraphTopology::read(graph_), theirs = GraphTopology::read(source);
    std::string where;
    if (std::size_t i = theirs.index_of(info.errorNode); i < theirs.nodes.size())
      where = ", at node [" + std::to_string(i) + "] " + theirs.nodes[i].label + " of the new graph";
    throw ValueError("Graph::update", "cannot update " + describe() + ": " +
                     update_result_text(info.result) + where + " (this graph: " +
                     mine.to_string() + "; new graph: " + theirs.to_string() + ")");
  }
  detail::check(rc, "cuGraphExecUpdate", [&] { return describe(); });
  // The original definition stays (topology, per-node handles); of the sources only the last
  // two are kept: a launch of the one before may still be running its host callbacks.
  if (owners_.size() >= 3) owners_.erase(owners_.begin() + 1);
  owners_.push_back(std::move(owner));
  if (!kernels_read_) read_kernel_nodes(graph_, false);  // the original handles first
  read_kernel_nodes(source, true);
}

void Graph::keep_alive(std::shared_ptr<void> object) {
  if (!attachments_) {  // a captured Graph: with its definitions
    owners_.push_back(std::move(object));
    return;
  }
  std::lock_guard<std::mutex> lock(attachments_->mutex);
  attachments_->items.push_back(std::move(object));
}

void Graph::debug_dot_print(const std::string& path, const GraphDebugPrintOptions& options) const {
  NANOCUDA_CALL(cuGraphDebugDotPrint, [&] { return describe() + ", writing '" + path + "'"; },
                graph_, path.c_str(), options.flags());
}

std::string Graph::topology() const { return GraphTopology::read(graph_).to_string(); }

std::string Graph::describe() const {
  char text[96];
  std::snprintf(text, sizeof text, "Graph %p (%zu nodes) on device %d",
                static_cast<void*>(exec_.get()), node_count_, device_.ordinal());
  return text;
}

}  // namespace nanocuda
