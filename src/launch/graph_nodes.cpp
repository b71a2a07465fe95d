// GraphBuilder's explicit nodes: added to the capture's graph after its current
// dependencies, which then become the new node (so later captured work follows it).
#include "graph_builder_state.h"
#include "graph_keepalive.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

CUgraph GraphBuilder::capture_graph(const char* call) const {
  require_building(call);
  CUstreamCaptureStatus status{};
  CUgraph graph = nullptr;
  NANOCUDA_CALL(cuStreamGetCaptureInfo, [&] { return describe(); }, state_->stream.handle(),
                &status, nullptr, &graph, nullptr, nullptr, nullptr);
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
    throw ValueError(std::string(call) + ": the capture of " + describe() +
                     " was invalidated by an illegal operation during capture; end_building() "
                     "reports why");
  return graph;
}

CUgraphNode GraphBuilder::add_node(CUgraphNodeParams& params, const char* call) {
  require_building(call);
  CurrentContext guard(state_->stream.context());
  CUstream stream = state_->stream.handle();
  CUstreamCaptureStatus status{};
  CUgraph graph = nullptr;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  std::size_t count = 0;
  NANOCUDA_CALL(cuStreamGetCaptureInfo, [&] { return describe(); }, stream, &status, nullptr,
                &graph, &deps, &edges, &count);
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
    throw ValueError(std::string(call) + ": the capture of " + describe() + " is not active");
  CUgraphNode node = nullptr;
  NANOCUDA_CALL(cuGraphAddNode, [&] { return std::string(call) + " on " + describe(); }, &node,
                graph, deps, edges, count, &params);
  NANOCUDA_CALL(cuStreamUpdateCaptureDependencies, [&] { return describe(); }, stream, &node,
                nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES);
  return node;
}

void GraphBuilder::keep_alive(std::shared_ptr<void> object) {
  state_->shared->root().keepalive.push_back(std::move(object));
}

void GraphBuilder::memset(CUdeviceptr dst, unsigned value, unsigned element_size, std::size_t count,
                          std::optional<std::size_t> dst_bytes) {
  require_building("GraphBuilder::memset");
  if (element_size != 1 && element_size != 2 && element_size != 4)
    throw ValueError("GraphBuilder::memset", "element_size must be 1, 2 or 4, got " +
                     std::to_string(element_size));
  if (dst_bytes && (count > *dst_bytes || count * element_size > *dst_bytes))
    throw ValueError("GraphBuilder::memset", std::to_string(count) + " elements of " +
                     std::to_string(element_size) + " bytes go past the end of the destination (" +
                     std::to_string(*dst_bytes) + " bytes)");
  if (element_size < 4 && value >> (8 * element_size))
    throw ValueError("GraphBuilder::memset", "value " + std::to_string(value) + " does not fit in " +
                     std::to_string(element_size) + " byte(s)");
  CurrentContext guard(state_->stream.context());
  CUstream s = state_->stream.handle();
  auto what = [&] { return describe(); };
  if (element_size == 1)
    NANOCUDA_CALL(cuMemsetD8Async, what, dst, static_cast<unsigned char>(value), count, s);
  else if (element_size == 2)
    NANOCUDA_CALL(cuMemsetD16Async, what, dst, static_cast<unsigned short>(value), count, s);
  else
    NANOCUDA_CALL(cuMemsetD32Async, what, dst, value, count, s);
}

void GraphBuilder::memcpy(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes,
                          std::optional<std::size_t> dst_bytes, std::optional<std::size_t> src_bytes) {
  require_building("GraphBuilder::memcpy");
  if ((dst_bytes && bytes > *dst_bytes) || (src_bytes && bytes > *src_bytes)) {
    auto size = [](std::optional<std::size_t> n) { return n ? std::to_string(*n) : std::string("?"); };
    throw ValueError("GraphBuilder::memcpy", "nbytes " + std::to_string(bytes) + " is past the end of dst (" +
                     size(dst_bytes) + " bytes) or src (" + size(src_bytes) + " bytes)");
  }
  CurrentContext guard(state_->stream.context());
  NANOCUDA_CALL(cuMemcpyAsync, [&] { return describe(); }, dst, src, bytes, state_->stream.handle());
}

void GraphBuilder::host_callback(CUhostFn fn, void* user_data, std::shared_ptr<void> keepalive) {
  if (state_->kind == Kind::Body)
    throw ValueError("GraphBuilder::host_callback", "conditional bodies cannot hold host callbacks "
                     "(a driver rule); put the callback before or after the conditional node");
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_HOST;
  p.host.fn = fn;
  p.host.userData = user_data;
  CUgraphNode node = add_node(p, "GraphBuilder::host_callback");
  if (!keepalive) return;
  // Pinned to the capture's graph per node (as GraphDefinition's nodes are), so a copy of the
  // graph embedded elsewhere holds it for its own node, and destroying that node releases it.
  CurrentContext guard(state_->stream.context());  // graph calls need one (an H100 segfaulted)
  CUgraph graph = capture_graph("GraphBuilder::host_callback");
  if (state_->kind != Kind::Body) state_->shared->captured = graph;
  auto pins = std::make_shared<std::vector<std::shared_ptr<void>>>(1, keepalive);
  if (CUuserObject obj = pin_to_graph(graph, pins)) {
    state_->shared->root().pins.emplace(node, GraphDefinition::State::Pin{graph, obj});
    return;
  }
  keep_alive(std::move(keepalive));  // no user objects: with the builder, as before
}

void GraphBuilder::record_event(const Event& event) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
  p.eventRecord.event = event.checked_handle("GraphBuilder::record_event");
  add_node(p, "GraphBuilder::record_event");
  event.note_recorded();
}

void GraphBuilder::wait_event(const Event& event) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
  p.eventWait.event = event.checked_handle("GraphBuilder::wait_event");
  add_node(p, "GraphBuilder::wait_event");
}

CUdeviceptr GraphBuilder::alloc(std::size_t bytes) {
  require_building("GraphBuilder::alloc");
  if (bytes == 0) throw ValueError("GraphBuilder::alloc", "size must be positive");
  CurrentContext guard(state_->stream.context());
  CUdeviceptr ptr = 0;  // captured: a mem-alloc node; the address is fixed for the graph's life
  NANOCUDA_CALL(cuMemAllocAsync, [&] { return describe(); }, &ptr, bytes, state_->stream.handle());
  return ptr;
}

void GraphBuilder::free(CUdeviceptr ptr) {
  require_building("GraphBuilder::free");
  CurrentContext guard(state_->stream.context());
  NANOCUDA_CALL(cuMemFreeAsync, [&] { return describe(); }, ptr, state_->stream.handle());
}

}  // namespace nanocuda
