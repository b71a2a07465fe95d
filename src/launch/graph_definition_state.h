// GraphDefinition::State: what the views of one definition tree share (private to src/launch).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nanocuda/driver/unique_handle.h"
#include "nanocuda/launch/graph_definition.h"

namespace nanocuda {

// One per tree: the root graph (owned, or borrowed with an owner), the conditions made in it,
// the records of the nodes added here and where each node's attachments are pinned (bodies
// and child copies share the tree's).
struct GraphDefinition::State {
  // A user object holding one node's attachments, and the graph holding it for that node.
  struct Pin {
    CUgraph graph;
    CUuserObject object;
  };

  std::uint64_t id = 0;
  Device device;
  // The root graph (cuGraphDestroy at the last holder): Graphs instantiated here hold it too
  // (their node handles are its nodes), but not the tree: see ~State.
  std::shared_ptr<void> owned;
  std::shared_ptr<void> borrowed_owner;  // a view's owner
  std::mutex mutex;                      // everything below
  // Per node: released (cuGraphReleaseUserObject) when the node is destroyed; the driver
  // releases those of a graph it destroys (the root, a destroyed node's bodies or copy).
  std::unordered_multimap<CUgraphNode, Pin> pins;
  // Graph -> the user objects it holds for itself (keep_alive without a node, keep_alive_once,
  // and their copies in child copies): with `pins`, every hold the tree's graphs have.
  std::unordered_multimap<CUgraph, CUuserObject> graph_pins;
  // The keys kept once per graph (keep_alive_once: a kernel shared by many nodes).
  std::set<std::pair<CUgraph, const void*>> kept_once;
  // Attachments when the driver has no user objects: they live as long as the tree.
  std::vector<std::shared_ptr<void>> kept;
  std::vector<CUgraphConditionalHandle> conditions;
  std::unordered_map<CUgraphNode, GraphNodeRecord> records;
  // Nodes added through add() and not destroyed, and their graph: require_own's O(1) answer
  // (listing the graph's nodes per dependency made a chained build quadratic).
  std::unordered_map<CUgraphNode, CUgraph> member_of;
  // Graphs owned by a node (conditional bodies, child clones) -> (the node, the graph it is in):
  // destroying the node destroys them, so their views must stop using the handle.
  std::unordered_map<CUgraph, std::pair<CUgraphNode, CUgraph>> owner_of;
  std::unordered_map<CUgraphNode, bool> destroyed;  // owner nodes destroyed

  bool alive(CUgraph g) const {  // callers hold `mutex`
    for (auto it = owner_of.find(g); it != owner_of.end(); it = owner_of.find(it->second.second))
      if (destroyed.count(it->second.first)) return false;
    return true;
  }

  // The holds of the graphs in `top`'s subtree (`top` itself, live child copies and bodies).
  std::vector<Pin> holds_under(CUgraph top) const;  // callers hold `mutex`

  // When Graphs still hold the root graph (for its node handles), gives back its graphs'
  // holds: the Graphs hold what they run on their own (lend_holds), so what only this tree
  // used goes with it. Never throws.
  ~State();

  explicit State(Device d) : device(d) {
    static std::atomic<std::uint64_t> next{1};
    id = next.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace nanocuda
