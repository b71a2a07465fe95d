// A node's attachments carried by a CUDA user object, so graph clones and executables keep them too.
#include <atomic>
#include <functional>
#include <iterator>
#include <mutex>
#include <utility>
#include <vector>

#include "graph_definition_state.h"
#include "graph_keepalive.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/driver/deferred_errors.h"
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
  for (;;) {  // freeing one may drop more (a Graph's attachments hold user objects)
    std::vector<Pins*> dropped;
    {
      std::lock_guard<std::mutex> lock(g_dropped_mutex);
      dropped.swap(g_dropped);
    }
    if (dropped.empty()) return;
    for (Pins* p : dropped) delete p;  // may free kernels' libraries, events (CUDA calls)
  }
}

void GraphDefinition::keep_alive(std::shared_ptr<void> object, CUgraphNode node) {
  auto pins = std::make_shared<std::vector<std::shared_ptr<void>>>(1, object);
  if (CUuserObject obj = pin_to_graph(graph_, pins)) {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (node)
      state_->pins.emplace(node, State::Pin{graph_, obj});
    else  // the graph's own: goes with the graph (and its clones)
      state_->graph_pins.emplace(graph_, obj);
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
using GraphPinMap = std::unordered_multimap<CUgraph, CUuserObject>;

// Copies the pins of `source`'s nodes (from `from`, the child's tree) to the matching nodes
// of `copy` (the driver's clone of `source`, whose user-object references it cloned), and
// `source`'s own (`from_graph`) to `copy`, nested child graphs included; the copies' graphs
// are recorded as owned by their nodes.
void copy_pins(const PinMap& from, const GraphPinMap& from_graph, CUgraph source, CUgraph copy,
               GraphDefinition::State& to) {
  const auto& api = detail::driver();
  auto [own_first, own_last] = from_graph.equal_range(source);
  for (auto it = own_first; it != own_last; ++it) to.graph_pins.emplace(copy, it->second);
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
    copy_pins(from, from_graph, inner, inner_copy, to);
  }
}
}  // namespace

void GraphDefinition::import_pins(const GraphDefinition& child, CUgraphNode node) {
  CUgraph copy = nullptr;
  NANOCUDA_CALL(cuGraphChildGraphNodeGetGraph, "GraphDefinition::add_child", node, &copy);
  PinMap from;
  GraphPinMap from_graph;
  std::vector<std::shared_ptr<void>> kept;
  {
    std::lock_guard<std::mutex> lock(child.state_->mutex);
    from = child.state_->pins;
    from_graph = child.state_->graph_pins;
    kept = child.state_->kept;
  }
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->owner_of[copy] = {node, graph_};
    if (detail::driver().cuGraphNodeFindInClone) copy_pins(from, from_graph, child.graph_, copy, *state_);
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
    state_->graph_pins.erase(g);
    for (auto it = state_->kept_once.begin(); it != state_->kept_once.end();)
      it = it->first == g ? state_->kept_once.erase(it) : std::next(it);
  }
  for (const auto& [g, owner] : state_->owner_of)
    if (owner.first == node) state_->destroyed[node] = true;  // its bodies / clone went with it
  return gone;
}

// -- Executables hold what they run on their own ---------------------------------------------
// The driver keeps the user-object references an executable takes at instantiation across
// cuGraphExecUpdate (an H100 showed it), so those could never let an old definition's
// attachments go. Instead a graph lends its holds out while an executable is made or updated
// from it (so the executable takes none), and the Graph keeps one reference to each itself
// (GraphAttachments, replaced by an update), carried by one user object of the executable's.

std::vector<GraphDefinition::State::Pin> GraphDefinition::State::holds_under(CUgraph top) const {
  auto under = [&](CUgraph g) {
    while (g != top) {
      auto it = owner_of.find(g);
      if (it == owner_of.end() || destroyed.count(it->second.first)) return false;
      g = it->second.second;
    }
    return true;
  };
  std::vector<Pin> out;
  for (const auto& [node, pin] : pins)
    if (under(pin.graph)) out.push_back(pin);
  for (const auto& [g, obj] : graph_pins)
    if (under(g)) out.push_back(Pin{g, obj});
  return out;
}

GraphDefinition::State::~State() {
  if (!owned || owned.use_count() == 1) return;  // the graph goes now, with its holds
  const auto* api = detail::loaded_driver();
  if (!api || !api->cuGraphReleaseUserObject) return;
  for (const Pin& p : holds_under(static_cast<CUgraph>(owned.get())))
    (void)api->cuGraphReleaseUserObject(p.graph, p.object, 1);
}

namespace {
bool has_user_objects() {
  const auto& api = detail::driver();
  return api.cuUserObjectCreate && api.cuUserObjectRetain && api.cuUserObjectRelease &&
         api.cuGraphRetainUserObject && api.cuGraphReleaseUserObject;
}

// One reference of our own to `obj`, given back with the last copy of the result.
std::shared_ptr<void> hold_object(CUuserObject obj) {
  return std::shared_ptr<void>(static_cast<void*>(obj), [](void* o) {
    if (const auto* api = detail::loaded_driver())
      (void)api->cuUserObjectRelease(static_cast<CUuserObject>(o), 1);
  });
}

// While alive, the graphs' holds in `holds` are lent out (each graph gives its reference up,
// so an executable made or updated now takes none); they are given back at the end. `items`
// has one reference of our own to each, for the Graph.
class LentHolds {
 public:
  explicit LentHolds(const std::vector<GraphDefinition::State::Pin>& holds) {
    const auto& api = detail::driver();
    for (const auto& h : holds) {
      if (api.cuUserObjectRetain(h.object, 1) != CUDA_SUCCESS) continue;
      items.push_back(hold_object(h.object));
      if (api.cuGraphReleaseUserObject(h.graph, h.object, 1) == CUDA_SUCCESS) lent_.push_back(h);
    }
  }
  ~LentHolds() {
    const auto* api = detail::loaded_driver();
    for (const auto& h : lent_)
      if (CUresult rc = api->cuGraphRetainUserObject(h.graph, h.object, 1, 0); rc != CUDA_SUCCESS)
        detail::record_deferred_error(rc, "cuGraphRetainUserObject", "GraphDefinition");
  }
  LentHolds(const LentHolds&) = delete;
  LentHolds& operator=(const LentHolds&) = delete;
  std::vector<std::shared_ptr<void>> items;

 private:
  std::vector<GraphDefinition::State::Pin> lent_;
};

struct ExecOwner {  // a Graph's definition_owner(): the root graph and what the Graph runs with
  std::shared_ptr<void> graph;
  std::shared_ptr<GraphAttachments> attachments;
};
}  // namespace

Graph GraphDefinition::instantiate(const GraphCompleteOptions& options) const {
  require_alive("GraphDefinition::instantiate");
  release_dropped();
  // A view (its owner holds the graph), or no user objects: the Graph holds the tree.
  if (!state_->owned || !has_user_objects()) return Graph::instantiate(graph_, state_, state_->device, options);
  std::vector<State::Pin> holds;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    holds = state_->holds_under(graph_);
  }
  auto attachments = std::make_shared<GraphAttachments>();
  // The executable's own user object (the graph lends it one reference while it is made).
  CUuserObject own = pin_to_graph(graph_, std::make_shared<std::vector<std::shared_ptr<void>>>(1, attachments));
  struct Unpin {
    CUgraph graph;
    CUuserObject obj;
    ~Unpin() {
      if (obj) unpin_from_graph(graph, obj);
    }
  } unpin{graph_, own};
  auto owner = std::make_shared<ExecOwner>(ExecOwner{state_->owned, attachments});
  LentHolds lent(holds);
  attachments->items = std::move(lent.items);
  Graph g = Graph::instantiate(graph_, owner, state_->device, options);
  g.attachments_ = std::move(attachments);
  return g;
}

void GraphDefinition::update(Graph& exec) const {
  require_alive("GraphDefinition::update");
  release_dropped();
  // A captured Graph, a view or no user objects: the Graph holds this tree.
  if (!exec.attachments_ || !state_->owned || !has_user_objects()) return exec.update(graph_, state_);
  std::vector<State::Pin> holds;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    holds = state_->holds_under(graph_);
  }
  std::vector<std::shared_ptr<void>> previous;  // given back last, after the holds are back
  std::vector<GraphAttachments::LaunchedOn> launched;
  bool more = false;
  {
    LentHolds lent(holds);
    exec.update(graph_, state_->owned);  // throws: nothing changed
    std::lock_guard<std::mutex> lock(exec.attachments_->mutex);
    previous.swap(exec.attachments_->items);
    exec.attachments_->items = std::move(lent.items);
    launched.swap(exec.attachments_->launched_on);  // later launches run the new set
    more = std::exchange(exec.attachments_->launched_on_more, false);
    exec.last_launch_.handle.store(detail::LastLaunchStream::none(), std::memory_order_relaxed);
  }
  // Launches made before the update may still run the old nodes (a host callback using its
  // payload): the old set goes when they are done.
  release_after_launches(std::move(previous), launched, more, *exec.context_, *exec.attachments_);
}

void release_after_launches(std::vector<std::shared_ptr<void>> items,
                            const std::vector<GraphAttachments::LaunchedOn>& launched, bool more,
                            const Context& context, GraphAttachments& keep) noexcept {
  if (items.empty() || (launched.empty() && !more)) return;  // nothing ran them: they go now
  Pins pins;
  bool retire = more;
  try {
    pins = std::make_shared<std::vector<std::shared_ptr<void>>>(std::move(items));
    const auto& api = detail::driver();
    CurrentContext guard(context);
    for (const auto& on : launched) {
      std::shared_ptr<const Stream::State> alive = on.stream.lock();
      if (!on.foreign && (!alive || alive->closed.load())) {  // closed since: nothing to queue on
        retire = true;
        continue;
      }
      CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
      if (api.cuStreamIsCapturing(on.handle, &capturing) != CUDA_SUCCESS ||
          capturing != CU_STREAM_CAPTURE_STATUS_NONE) {  // a host function would be captured
        retire = true;
        continue;
      }
      auto* share = new Pins(pins);
      if (CUresult rc = api.cuLaunchHostFunc(on.handle, drop_pins, share); rc != CUDA_SUCCESS) {
        delete share;
        detail::record_deferred_error(rc, "cuLaunchHostFunc", "Graph.update (releasing the replaced "
                                      "definition's attachments after its launches)");
        retire = true;
      }
    }
  } catch (...) {  // no memory, no context: keep the set with the Graph
    retire = true;
  }
  if (!retire || !pins) return;  // the host functions' shares release it
  try {
    std::lock_guard<std::mutex> lock(keep.mutex);
    keep.retired.push_back(std::move(pins));
  } catch (...) {
  }
}

}  // namespace nanocuda
