// A node's attachments carried by a CUDA user object, so graph clones and executables keep them too.
#include <atomic>
#include <functional>
#include <iterator>
#include <mutex>
#include <vector>

#include "graph_definition_state.h"
#include "graph_keepalive.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/driver/driver_api.h"
#include "nanocuda/launch/graph_definition.h"

namespace nanocuda {

namespace {
std::mutex g_dropped_mutex;
std::vector<Pins*> g_dropped;  // holds the driver let go of, not yet released
std::atomic<void (*)()> g_dropped_hook{nullptr};

// The user object's destructor: runs on a driver thread, so it only queues.
void CUDA_CB drop_pins(void* data) {
  {
    std::lock_guard<std::mutex> lock(g_dropped_mutex);
    g_dropped.push_back(static_cast<Pins*>(data));
  }
  if (auto hook = g_dropped_hook.load()) hook();
}

}  // namespace

CUuserObject pin_to_graph(CUgraph graph, const Pins& pins) {
  const auto& api = detail::driver();
  if (!api.cuUserObjectCreate || !api.cuGraphRetainUserObject) return nullptr;
  auto* hold = new Pins(pins);
  CUuserObject obj = nullptr;
  if (api.cuUserObjectCreate(&obj, hold, drop_pins, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) != CUDA_SUCCESS || !obj) {
    delete hold;
    return nullptr;
  }
  // MOVE: the graph takes our one reference; the object dies with the last graph holding it.
  if (api.cuGraphRetainUserObject(graph, obj, 1, CU_GRAPH_USER_OBJECT_MOVE) != CUDA_SUCCESS) {
    (void)api.cuUserObjectRelease(obj, 1);  // runs drop_pins
    return nullptr;
  }
  return obj;
}

void unpin_from_graph(CUgraph graph, CUuserObject obj) noexcept {
  const auto* api = detail::loaded_driver();
  if (api && api->cuGraphReleaseUserObject) (void)api->cuGraphReleaseUserObject(graph, obj, 1);
}

void GraphDefinition::set_dropped_hook(void (*hook)()) noexcept { g_dropped_hook.store(hook); }

void GraphDefinition::release_dropped() noexcept {
  std::vector<Pins*> dropped;
  {
    std::lock_guard<std::mutex> lock(g_dropped_mutex);
    dropped.swap(g_dropped);
  }
  for (Pins* p : dropped) delete p;  // may free kernels' libraries, events (CUDA calls)
}

void GraphDefinition::keep_alive(std::shared_ptr<void> object, CUgraphNode node) {
  auto pins = std::make_shared<std::vector<std::shared_ptr<void>>>(1, object);
  if (CUuserObject obj = pin_to_graph(graph_, pins)) {
    if (!node) return;  // the graph's own: goes with the graph (and its clones, executables)
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->pins.emplace(node, State::Pin{graph_, obj});
    return;
  }
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->kept.push_back(std::move(object));
}

void GraphDefinition::keep_alive_once(const void* key, const std::function<std::shared_ptr<void>()>& make) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    const std::pair<CUgraph, const void*> entry{graph_, key};
    if (state_->kept_once.count(entry)) return;  // the usual case: no node allocated to learn it
    state_->kept_once.insert(entry);
  }
  keep_alive(make());
}

namespace {
using PinMap = std::unordered_multimap<CUgraphNode, GraphDefinition::State::Pin>;

// Copies the pins of `source`'s nodes (from `from`, the child's tree) to the matching nodes
// of `copy` (the driver's clone of `source`, whose user-object references it cloned), nested
// child graphs included; the copies' graphs are recorded as owned by their nodes.
void copy_pins(const PinMap& from, CUgraph source, CUgraph copy, GraphDefinition::State& to) {
  const auto& api = detail::driver();
  std::size_t n = 0;
  NANOCUDA_CALL(cuGraphGetNodes, "GraphDefinition::add_child", source, nullptr, &n);
  std::vector<CUgraphNode> nodes(n);
  if (n) NANOCUDA_CALL(cuGraphGetNodes, "GraphDefinition::add_child", source, nodes.data(), &n);
  for (CUgraphNode original : nodes) {
    CUgraphNode twin = nullptr;
    if (api.cuGraphNodeFindInClone(&twin, original, copy) != CUDA_SUCCESS || !twin) continue;
    auto [first, last] = from.equal_range(original);
    for (auto it = first; it != last; ++it) to.pins.emplace(twin, GraphDefinition::State::Pin{copy, it->second.object});
    if (GraphDefinition::node_type(original) != CU_GRAPH_NODE_TYPE_GRAPH) continue;
    CUgraph inner = nullptr, inner_copy = nullptr;
    NANOCUDA_CALL(cuGraphChildGraphNodeGetGraph, "GraphDefinition::add_child", original, &inner);
    NANOCUDA_CALL(cuGraphChildGraphNodeGetGraph, "GraphDefinition::add_child", twin, &inner_copy);
    to.owner_of[inner_copy] = {twin, copy};
    copy_pins(from, inner, inner_copy, to);
  }
}
}  // namespace

void GraphDefinition::import_pins(const GraphDefinition& child, CUgraphNode node) {
  CUgraph copy = nullptr;
  NANOCUDA_CALL(cuGraphChildGraphNodeGetGraph, "GraphDefinition::add_child", node, &copy);
  PinMap from;
  std::vector<std::shared_ptr<void>> kept;
  {
    std::lock_guard<std::mutex> lock(child.state_->mutex);
    from = child.state_->pins;
    kept = child.state_->kept;
  }
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->owner_of[copy] = {node, graph_};
    if (detail::driver().cuGraphNodeFindInClone) copy_pins(from, child.graph_, copy, *state_);
  }
  for (auto& object : kept) keep_alive(std::move(object), node);  // what no user object holds
}

std::vector<CUgraphNode> GraphDefinition::destroy_node(CUgraphNode node) {
  require_own(node, "GraphDefinition::destroy_node");
  // The nodes that go with it: those of the graphs it owns (bodies, a child copy), recursively.
  std::vector<CUgraphNode> gone{node};
  std::vector<CUgraph> owned;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    for (const auto& [g, owner] : state_->owner_of)
      if (owner.first == node && state_->alive(g)) owned.push_back(g);
  }
  std::vector<CUgraph> dead;  // destroyed with the node: the driver dropped their holds
  while (!owned.empty()) {
    CUgraph g = owned.back();
    owned.pop_back();
    dead.push_back(g);
    std::size_t n = 0;
    if (detail::driver().cuGraphGetNodes(g, nullptr, &n) != CUDA_SUCCESS) continue;
    std::vector<CUgraphNode> inner(n);
    if (n && detail::driver().cuGraphGetNodes(g, inner.data(), &n) != CUDA_SUCCESS) continue;
    inner.resize(n);
    std::lock_guard<std::mutex> lock(state_->mutex);
    for (CUgraphNode m : inner) {
      gone.push_back(m);
      for (const auto& [h, owner] : state_->owner_of)
        if (owner.first == m) owned.push_back(h);
    }
  }
  NANOCUDA_CALL(cuGraphDestroyNode, [&] { return describe(); }, node);
  std::lock_guard<std::mutex> lock(state_->mutex);  // the record stays: a destroyed node's view reads it
  auto [first, last] = state_->pins.equal_range(node);
  for (auto it = first; it != last; ++it) unpin_from_graph(it->second.graph, it->second.object);
  // The driver released the references of the graphs it destroyed with the node.
  for (CUgraphNode m : gone) {
    state_->pins.erase(m);
    state_->member_of.erase(m);
  }
  for (CUgraph g : dead) {  // a later graph may get the same handle
    for (auto it = state_->kept_once.begin(); it != state_->kept_once.end();)
      it = it->first == g ? state_->kept_once.erase(it) : std::next(it);
  }
  for (const auto& [g, owner] : state_->owner_of)
    if (owner.first == node) state_->destroyed[node] = true;  // its bodies / clone went with it
  return gone;
}

}  // namespace nanocuda
