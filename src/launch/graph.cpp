// Graph capture, instantiation, replay and kernel-argument update.
#include "nanocuda/launch/graph.h"

#include <cstdio>

#include "nanocuda/driver/check.h"

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

void Graph::begin_capture(const Stream& stream) {
  CurrentContext guard(stream.context());
  if (!stream.is_owned() && stream.raw_handle() == CU_STREAM_LEGACY)
    throw ValueError("Graph.capture: the legacy default stream cannot be captured; use a "
                     "nanocuda.Stream");
  NANOCUDA_CALL(cuStreamBeginCapture, [&] { return stream.describe(); }, stream.handle(),
                CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
}

Graph Graph::end_capture(const Stream& stream) {
  CurrentContext guard(stream.context());
  CUgraph graph = nullptr;
  NANOCUDA_CALL(cuStreamEndCapture, [&] { return stream.describe(); }, stream.handle(), &graph);
  detail::UniqueHandle<CUgraph, detail::destroy_graph> owned(graph);
  CUgraphExec exec = nullptr;
  NANOCUDA_CALL(cuGraphInstantiateWithFlags, [&] { return "graph captured on " + stream.describe(); },
                &exec, graph, 0);
  return Graph(owned.release(), exec, stream.device());
}

Graph::Graph(CUgraph graph, CUgraphExec exec, Device device)
    : graph_(graph), exec_(exec), device_(device), context_(device.context()) {
  const auto& api = detail::driver();
  std::size_t n = 0;
  NANOCUDA_CALL(cuGraphGetNodes, [&] { return describe(); }, graph, nullptr, &n);
  std::vector<CUgraphNode> nodes(n);
  if (n) NANOCUDA_CALL(cuGraphGetNodes, [&] { return describe(); }, graph, nodes.data(), &n);
  node_count_ = n;
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
      k.name = "kernel node " + std::to_string(kernels_.size());
    kernels_.push_back(std::move(k));
  }
}

void Graph::launch(const Stream& stream) const {
  NANOCUDA_CALL(cuGraphLaunch, [&] { return describe() + " on " + stream.describe(); },
                exec_.get(), stream.handle());
}

CUresult Graph::launch_unchecked(CUstream stream) const noexcept {
  return detail::driver().cuGraphLaunch(exec_.get(), stream);
}

void Graph::set_kernel_params(std::size_t index, void** params) {
  if (index >= kernels_.size())
    throw ValueError(describe() + ": no kernel node " + std::to_string(index) + " (the graph has " +
                     std::to_string(kernels_.size()) + ")");
  CUDA_KERNEL_NODE_PARAMS p = kernels_[index].params;
  p.kernelParams = params;
  p.extra = nullptr;
  CurrentContext guard(*context_);
  NANOCUDA_CALL(cuGraphExecKernelNodeSetParams,
                [&] { return describe() + ", kernel node " + std::to_string(index) + " ('" +
                             kernels_[index].name + "')"; },
                exec_.get(), kernels_[index].node, &p);
}

std::string Graph::describe() const {
  char text[96];
  std::snprintf(text, sizeof text, "Graph %p (%zu nodes, %zu kernels) on device %d",
                static_cast<void*>(exec_.get()), node_count_, kernels_.size(), device_.ordinal());
  return text;
}

}  // namespace nanocuda
