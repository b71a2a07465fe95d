// GraphBuilder: capture lifecycle, forks and joins, child graphs and conditional nodes.
#include <algorithm>
#include <cstdio>

#include "graph_builder_state.h"
#include "nanocuda/launch/graph_definition.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/driver/deferred_errors.h"
#include "nanocuda/driver/driver_version.h"
#include "nanocuda/launch/graph_topology.h"

namespace nanocuda {

namespace {
const char* kind_name(GraphBuilder::Kind k) {
  switch (k) {
    case GraphBuilder::Kind::Primary: return "primary";
    case GraphBuilder::Kind::Forked: return "forked";
    default: return "conditional body";
  }
}
CUstreamCaptureMode capture_mode(GraphBuilder::Mode m) {
  switch (m) {
    case GraphBuilder::Mode::Global: return CU_STREAM_CAPTURE_MODE_GLOBAL;
    case GraphBuilder::Mode::ThreadLocal: return CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    default: return CU_STREAM_CAPTURE_MODE_RELAXED;
  }
}
}  // namespace

CUresult GraphBuilder::State::end_capture() noexcept {
  // An unjoined split() leaves the capture invalidated: the driver ends it with an error
  // that needs no report. A body's graph belongs to its conditional node.
  CUgraph graph = nullptr;
  CUresult rc = CUDA_SUCCESS;
  try {
    CurrentContext guard(stream.context());
    rc = detail::driver().cuStreamEndCapture(stream.raw_handle(), &graph);
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
  if (graph && kind == Kind::Primary) detail::destroy_graph(graph);
  building = false;
  return rc == CUDA_ERROR_STREAM_CAPTURE_UNJOINED || rc == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
             ? CUDA_SUCCESS : rc;
}

GraphBuilder::State::~State() {
  if (!building || kind == Kind::Forked) return;  // a fork's capture ends with its origin's
  CUresult rc = end_capture();
  if (rc != CUDA_SUCCESS)
    detail::record_deferred_failure(rc, "cuStreamEndCapture",
                                    "ending the capture of a GraphBuilder dropped while building");
}

GraphBuilder GraphBuilder::create(const Device& device) {
  return on_stream(Stream::create(device));
}

GraphBuilder GraphBuilder::on_stream(StreamRef stream) {
  auto state = std::make_shared<State>(State{std::make_shared<Shared>(stream.device()), stream});
  return GraphBuilder(std::move(state));
}

std::string GraphBuilder::describe() const {
  const State& s = *state_;
  std::string status = s.released ? "closed" : s.closed ? "joined" : s.building ? "building" : s.built ? "built" : "not started";
  return "GraphBuilder #" + std::to_string(s.shared->id) + " (" + kind_name(s.kind) + ", " +
         status + ") on " + s.stream.describe();
}

bool GraphBuilder::is_building() const noexcept { return state_->building; }
bool GraphBuilder::is_closed() const noexcept { return state_->closed; }
bool GraphBuilder::is_built() const noexcept { return state_->built; }
// cuda.core's rule: a builder made by split() must be joined (the one it forked from need not).
bool GraphBuilder::is_join_required() const noexcept {
  return state_->kind == Kind::Forked && !state_->closed;
}
bool GraphBuilder::same_as(const GraphBuilder& other) const noexcept { return state_ == other.state_; }
GraphBuilder::Kind GraphBuilder::kind() const noexcept { return state_->kind; }
StreamRef GraphBuilder::stream() const noexcept { return state_->stream.ref(); }
const Device& GraphBuilder::device() const noexcept { return state_->shared->device; }
std::uint64_t GraphBuilder::graph_id() const noexcept { return state_->shared->id; }
CUgraph GraphBuilder::graph() const noexcept {
  return (state_->built || state_->kind == Kind::Body) ? state_->shared->graph : nullptr;
}

void GraphBuilder::require_building(const char* call) const {
  // The first sentence of each is cuda.core's wording (users match on it).
  if (state_->released)
    throw StateError("Graph builder has been closed. " + std::string(call) + ": " + describe() +
                     " is closed (close() was called); make a new builder");
  if (state_->closed)
    throw StateError("Graph builder has been closed. " + std::string(call) + ": " + describe() +
                     " was joined into another builder; use the builder join() returned");
  if (!state_->building)
    throw StateError(std::string(call) == "GraphBuilder::split"
                         ? "Graph builder must be building before it can be split. " + std::string(call) +
                               ": " + describe() + "; call begin_building() first"
                         : "Graph builder is not building. " + std::string(call) + ": " + describe() +
                               "; call begin_building() first");
}

GraphBuilder& GraphBuilder::begin_building(Mode mode) {
  State& s = *state_;
  if (s.released) require_building("GraphBuilder::begin_building");  // says it is closed
  if (s.building)
    throw StateError("Graph builder is already building. GraphBuilder::begin_building: " + describe() +
                     " is already capturing");
  if (s.built || s.closed)
    throw StateError("Cannot resume building after building has ended. GraphBuilder::begin_building: " +
                     describe() + " has finished; make a new builder (a graph is built once)");
  if (s.kind == Kind::Forked)
    throw ValueError("GraphBuilder::begin_building", "builders from split() are already building");
  if (!s.stream.views_owned_stream() && s.stream.raw_handle() == CU_STREAM_LEGACY)
    throw ValueError("GraphBuilder::begin_building", "the legacy default stream cannot be captured; "
                     "build on a Stream of its own (Stream::create)");
  CurrentContext guard(s.stream.context());
  if (s.kind == Kind::Body)
    NANOCUDA_CALL(cuStreamBeginCaptureToGraph, [&] { return describe(); }, s.stream.handle(),
                  s.shared->graph, nullptr, nullptr, 0, capture_mode(mode));
  else
    NANOCUDA_CALL(cuStreamBeginCapture, [&] { return describe(); }, s.stream.handle(),
                  capture_mode(mode));
  s.building = true;
  return *this;
}

GraphBuilder& GraphBuilder::end_building() {
  State& s = *state_;
  if (s.released) require_building("GraphBuilder::end_building");  // says it is closed
  if (s.kind == Kind::Forked)
    throw ValueError("GraphBuilder::end_building", describe() + " came from split(); it ends "
                     "by GraphBuilder::join(...) with the builder it forked from");
  if (!s.building)
    throw StateError("Graph builder is not building. GraphBuilder::end_building: " + describe() + " (" +
                     (s.built ? "end_building() was already called" : "call begin_building() first") + ")");
  if (s.shared->open_forks > 0)
    throw ValueError("GraphBuilder::end_building", std::to_string(s.shared->open_forks) +
                     " builder(s) from split() are not joined; call GraphBuilder::join(...) first");
  CurrentContext guard(s.stream.context());
  CUgraph graph = nullptr;
  s.building = false;  // the capture ends even when the driver reports an error
  NANOCUDA_CALL(cuStreamEndCapture, [&] { return describe(); }, s.stream.handle(), &graph);
  if (s.kind == Kind::Primary) {
    s.shared->owned.reset(graph);
    s.shared->graph = graph;
    // The pins name the graph as the capture did; should the driver's handle differ, it is this.
    for (auto& [node, pin] : s.shared->pins)
      if (pin.graph == s.shared->captured) pin.graph = graph;
    for (auto& [copy, owner] : s.shared->owner_of)
      if (owner.second == s.shared->captured) owner.second = graph;
  }
  s.built = true;
  return *this;
}

void GraphBuilder::close() {
  GraphDefinition::release_dropped();  // holds the driver let go of while no drain could be queued
  State& s = *state_;
  if (s.released) return;
  if (s.building && s.kind == Kind::Forked)
    throw ValueError("GraphBuilder::close", describe() + " came from split() and is still "
                     "building; join it into the builder it forked from first");
  bool was_building = s.building;
  s.closed = s.released = true;
  if (!was_building) return;
  // End the capture so the stream can be used again (a primary's captured graph is discarded).
  CUresult rc = s.end_capture();
  s.building = false;
  detail::check(rc, "cuStreamEndCapture", [&] { return describe(); });
}

Graph GraphBuilder::complete(const GraphCompleteOptions& options) const {
  const State& s = *state_;
  if (s.released || s.closed)
    throw StateError("Graph builder has been closed. GraphBuilder::complete: " + describe() +
                     (s.released ? " is closed (close() was called)" : " was joined into another builder"));
  if (s.kind != Kind::Primary)
    throw ValueError("GraphBuilder::complete", describe() + " is part of another graph; "
                     "complete the builder it came from");
  if (!s.built)
    throw StateError("Graph has not finished building. GraphBuilder::complete: " + describe() +
                     " is unfinished; call " +
                     (s.building ? "end_building()" : "begin_building(), record work, end_building()") +
                     " first");
  return Graph::instantiate(s.shared->graph, s.shared, s.shared->device, options);
}

std::vector<GraphBuilder> GraphBuilder::split(std::size_t count) {
  require_building("GraphBuilder::split");
  if (count < 2)
    throw ValueError("Invalid split count: expecting >= 2, got " + std::to_string(count) +
                     " (GraphBuilder::split: count must be at least 2)");
  std::vector<GraphBuilder> out{*this};
  for (std::size_t i = 1; i < count; ++i) {
    Stream fork = Stream::create(state_->shared->device);
    fork.wait(state_->stream);  // joins `fork` to the capture, after everything so far
    auto st = std::make_shared<State>(State{state_->shared, fork, Kind::Forked, true});
    ++state_->shared->open_forks;
    out.push_back(GraphBuilder(std::move(st)));
  }
  return out;
}

GraphBuilder GraphBuilder::join(const std::vector<GraphBuilder>& builders) {
  if (builders.size() < 2)
    throw ValueError("Must join with at least two graph builders (GraphBuilder::join: got " +
                     std::to_string(builders.size()) + ")");
  const GraphBuilder* target = &builders[0];
  for (const auto& b : builders)
    if (b.state_->kind != Kind::Forked) { target = &b; break; }
  for (const auto& b : builders) {
    if (b.state_->shared != target->state_->shared)
      throw ValueError("GraphBuilder::join", b.describe() + " belongs to another graph than " +
                       target->describe() + "; only builders from one split() can be joined");
    b.require_building("GraphBuilder::join");
  }
  for (const auto& b : builders) {
    if (b.state_ == target->state_) continue;
    target->state_->stream.wait(b.state_->stream);
    if (b.state_->kind == Kind::Forked) {
      b.state_->building = false;
      b.state_->closed = true;
      --b.state_->shared->open_forks;
    }
  }
  return *target;
}

namespace {
// Records, for the nodes of `copy` (the driver's copy of `source`, a graph of `from`'s tree),
// the pins their originals have in `from`, nested copies included.
void copy_builder_pins(const GraphBuilder::Shared& from, CUgraph source, CUgraph copy, GraphBuilder::Shared& to) {
  for (const auto& [original, pin] : from.pins) {
    if (pin.graph != source) continue;
    CUgraphNode twin = nullptr;
    if (detail::driver().cuGraphNodeFindInClone(&twin, original, copy) == CUDA_SUCCESS && twin)
      to.pins.emplace(twin, GraphDefinition::State::Pin{copy, pin.object});
  }
  for (const auto& [inner, owner] : from.owner_of) {
    if (owner.second != source) continue;
    CUgraphNode twin = nullptr;
    CUgraph inner_copy = nullptr;
    if (detail::driver().cuGraphNodeFindInClone(&twin, owner.first, copy) != CUDA_SUCCESS || !twin ||
        detail::driver().cuGraphChildGraphNodeGetGraph(twin, &inner_copy) != CUDA_SUCCESS || !inner_copy)
      continue;
    to.owner_of[inner_copy] = {twin, copy};
    copy_builder_pins(from, inner, inner_copy, to);
  }
}
}  // namespace

void GraphBuilder::add_child(const GraphBuilder& child) {
  if (child.state_->kind != Kind::Primary || !child.state_->built)
    throw ValueError("GraphBuilder::add_child", child.describe() + " must be a finished "
                     "(end_building() called) builder from create_graph_builder()");
  if (child.state_->shared == state_->shared)
    throw ValueError("GraphBuilder::add_child", "a builder cannot be added to itself");
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_GRAPH;
  p.graph.graph = child.state_->shared->graph;  // the driver copies it
  CUgraphNode node = add_node(p, "GraphBuilder::add_child");
  Shared& from = child.state_->shared->root();
  // The copy holds what the child's graph held per node (the driver copied its user-object
  // references); what the child keeps otherwise (events...) the whole copy needs.
  if (!from.keepalive.empty()) keep_alive(child.state_->shared);
  if (from.pins.empty() || !detail::driver().cuGraphNodeFindInClone) return;
  CurrentContext guard(state_->stream.context());  // graph calls need one (an H100 segfaulted)
  CUgraph copy = nullptr;
  NANOCUDA_CALL(cuGraphChildGraphNodeGetGraph, [&] { return describe(); }, node, &copy);
  Shared& to = state_->shared->root();
  CUgraph here = capture_graph("GraphBuilder::add_child");
  if (state_->kind != Kind::Body) state_->shared->captured = here;
  to.owner_of[copy] = {node, here};
  copy_builder_pins(from, child.state_->shared->graph, copy, to);
}


CUgraphConditionalHandle GraphBuilder::create_conditional_handle(std::optional<unsigned> default_value) {
  CUgraph graph = capture_graph("GraphBuilder::create_conditional_handle");
  CUgraphConditionalHandle h = 0;
  NANOCUDA_CALL(cuGraphConditionalHandleCreate, [&] { return describe(); }, &h, graph,
                state_->shared->device.context()->handle(), default_value.value_or(0),
                default_value ? CU_GRAPH_COND_ASSIGN_DEFAULT : 0u);
  state_->shared->handles.push_back(h);
  return h;
}

bool GraphBuilder::knows_handle(CUgraphConditionalHandle handle) const noexcept {
  for (const Shared* s = state_->shared.get(); s; s = s->parent.get())
    for (auto h : s->handles)
      if (h == handle) return true;
  return false;
}

bool GraphBuilder::knows_graph(std::uint64_t id) const noexcept {
  for (const Shared* s = state_->shared.get(); s; s = s->parent.get())
    if (s->id == id) return true;
  return false;
}

void GraphBuilder::require_graph(std::uint64_t id, const char* call) const {
  if (!knows_graph(id))
    throw ValueError(call, "this conditional handle belongs to graph #" + std::to_string(id) + ", not to " +
                     describe() + " (or a graph enclosing it)");
}

GraphBuilder::Mode GraphBuilder::mode_from_name(std::string_view name, std::string_view shown) {
  if (name == "relaxed") return Mode::Relaxed;
  if (name == "thread_local") return Mode::ThreadLocal;
  if (name == "global") return Mode::Global;
  // cuda.core's wording first (users match on it).
  throw ValueError("Unsupported build mode: " + (shown.empty() ? "'" + std::string(name) + "'" : std::string(shown)) +
                   " (GraphBuilder::begin_building: mode must be 'relaxed', 'thread_local' or 'global')");
}

std::shared_ptr<void> GraphBuilder::definition_owner() const noexcept { return state_->shared; }

GraphDefinition GraphBuilder::definition_view() const {
  GraphDefinition view = GraphDefinition::view(graph(), definition_owner(), device());
  const Shared& root = state_->shared->root();
  if (root.pins.empty()) return view;
  auto& tree = *std::static_pointer_cast<GraphDefinition::State>(view.owner());
  CurrentContext guard(*device().context());
  // Only the records of nodes still there, walking down from this graph through live copies
  // (a node destroyed through an earlier view took its copy's graph with it).
  std::vector<CUgraph> live{graph()};
  while (!live.empty()) {
    CUgraph g = live.back();
    live.pop_back();
    std::size_t n = 0;
    NANOCUDA_CALL(cuGraphGetNodes, [&] { return describe(); }, g, nullptr, &n);
    std::vector<CUgraphNode> nodes(n);
    if (n) NANOCUDA_CALL(cuGraphGetNodes, [&] { return describe(); }, g, nodes.data(), &n);
    nodes.resize(n);
    for (CUgraphNode node : nodes) {
      auto [first, last] = root.pins.equal_range(node);
      for (auto it = first; it != last; ++it)
        if (it->second.graph == g) tree.pins.emplace(node, it->second);
    }
    for (const auto& [copy, owner] : root.owner_of)
      if (owner.second == g && std::find(nodes.begin(), nodes.end(), owner.first) != nodes.end()) {
        tree.owner_of.emplace(copy, owner);
        live.push_back(copy);
      }
  }
  return view;
}

std::vector<GraphBuilder> GraphBuilder::add_conditional(CUgraphConditionalHandle handle,
                                                        CUgraphConditionalNodeType type,
                                                        unsigned size, const char* call) {
  require_building(call);
  if (!knows_handle(handle)) {
    char text[40];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(handle));
    throw ValueError(std::string(call) + ": conditional handle " + text + " was not made by "
                     "create_conditional_handle() of this graph (or a graph enclosing it): " +
                     describe());
  }
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = handle;
  p.conditional.type = type;
  p.conditional.size = size;
  p.conditional.ctx = state_->shared->device.context()->handle();
  add_node(p, call);  // fills phGraph_out with `size` driver-owned body graphs
  std::vector<GraphBuilder> bodies;
  for (unsigned i = 0; i < size; ++i) {
    auto shared = std::make_shared<Shared>(state_->shared->device);
    shared->parent = state_->shared;
    shared->graph = p.conditional.phGraph_out[i];
    Stream stream = Stream::create(state_->shared->device);
    bodies.push_back(GraphBuilder(std::make_shared<State>(State{std::move(shared), stream, Kind::Body})));
  }
  return bodies;
}

GraphBuilder GraphBuilder::if_cond(CUgraphConditionalHandle handle) {
  return add_conditional(handle, CU_GRAPH_COND_TYPE_IF, 1, "GraphBuilder::if_cond")[0];
}

std::pair<GraphBuilder, GraphBuilder> GraphBuilder::if_else(CUgraphConditionalHandle handle) {
  // Conditional nodes (IF, WHILE) came with CUDA 12.3; an IF with an else body and SWITCH
  // nodes with 12.8, and an older driver rejects them with a bare CUDA_ERROR_INVALID_VALUE.
  detail::require_driver_version(12080, "GraphBuilder::if_else (an if conditional node with an else body)");
  auto b = add_conditional(handle, CU_GRAPH_COND_TYPE_IF, 2, "GraphBuilder::if_else");
  return {b[0], b[1]};
}

GraphBuilder GraphBuilder::while_loop(CUgraphConditionalHandle handle) {
  return add_conditional(handle, CU_GRAPH_COND_TYPE_WHILE, 1, "GraphBuilder::while_loop")[0];
}

std::vector<GraphBuilder> GraphBuilder::switch_(CUgraphConditionalHandle handle, std::size_t count) {
  if (count < 1 || count > 1u << 16)
    throw ValueError("GraphBuilder::switch_", "count must be 1 to 65536, got " + std::to_string(count));
  detail::require_driver_version(12080, "GraphBuilder::switch_ (a switch conditional node)");
  return add_conditional(handle, CU_GRAPH_COND_TYPE_SWITCH, static_cast<unsigned>(count),
                         "GraphBuilder::switch_");
}

void GraphBuilder::debug_dot_print(const std::string& path, const GraphDebugPrintOptions& options) const {
  CUgraph g = state_->building ? capture_graph("GraphBuilder::debug_dot_print") : graph();
  if (!g)
    throw ValueError("GraphBuilder::debug_dot_print", describe() + " has no graph yet; call "
                     "begin_building() first");
  NANOCUDA_CALL(cuGraphDebugDotPrint, [&] { return describe() + ", writing '" + path + "'"; }, g,
                path.c_str(), options.flags());
}

std::string GraphBuilder::topology() const {
  CUgraph g = state_->building ? capture_graph("GraphBuilder::topology") : graph();
  return g ? GraphTopology::read(g).to_string() : std::string("no graph yet");
}

}  // namespace nanocuda
