// A graph's nodes and edges read back from the driver: for repr, errors and tests.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace nanocuda {

struct GraphTopology {
  struct Node {
    CUgraphNode handle = nullptr;
    CUgraphNodeType type{};
    std::string label;  // "kernel 'add'", "memset", "while (handle 0x...)", ...
  };
  std::vector<Node> nodes;                               // in cuGraphGetNodes order
  std::vector<std::pair<std::size_t, std::size_t>> edges;  // indices into nodes

  // Reads `graph` (a context need not be current).
  static GraphTopology read(CUgraph graph);
  // The index of `node`, or nodes.size() when it is not in this graph.
  [[nodiscard]] std::size_t index_of(CUgraphNode node) const noexcept;
  // "3 nodes: [0] kernel 'add', [1] memset, [2] host callback; edges: 0->1, 1->2".
  [[nodiscard]] std::string to_string() const;
};

// "kernel", "memcpy", "conditional", ... for a node type.
const char* graph_node_type_name(CUgraphNodeType type) noexcept;

}  // namespace nanocuda
