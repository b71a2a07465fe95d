// Reading a graph back for people: node/edge listings and the dot-print flags.
#include <cstdio>

#include "nanocuda/driver/check.h"
#include "nanocuda/launch/graph_debug_print_options.h"
#include "nanocuda/launch/graph_topology.h"

namespace nanocuda {

const char* graph_node_type_name(CUgraphNodeType type) noexcept {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
    case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
    case CU_GRAPH_NODE_TYPE_MEMSET: return "memset";
    case CU_GRAPH_NODE_TYPE_HOST: return "host callback";
    case CU_GRAPH_NODE_TYPE_GRAPH: return "child graph";
    case CU_GRAPH_NODE_TYPE_EMPTY: return "empty";
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "event wait";
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "event record";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL: return "semaphore signal";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return "semaphore wait";
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "mem alloc";
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return "mem free";
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: return "batch mem op";
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return "conditional";
    default: return "node";
  }
}

GraphTopology GraphTopology::read(CUgraph graph) {
  const auto& api = detail::driver();
  auto what = [&] {
    char text[48];
    std::snprintf(text, sizeof text, "graph %p", static_cast<void*>(graph));
    return std::string(text);
  };
  GraphTopology t;
  std::size_t n = 0;
  NANOCUDA_CALL(cuGraphGetNodes, what, graph, nullptr, &n);
  std::vector<CUgraphNode> nodes(n);
  if (n) NANOCUDA_CALL(cuGraphGetNodes, what, graph, nodes.data(), &n);
  nodes.resize(n);
  for (CUgraphNode node : nodes) {
    Node entry;
    entry.handle = node;
    NANOCUDA_CALL(cuGraphNodeGetType, what, node, &entry.type);
    entry.label = graph_node_type_name(entry.type);
    if (entry.type == CU_GRAPH_NODE_TYPE_KERNEL) {
      CUDA_KERNEL_NODE_PARAMS p{};
      const char* name = nullptr;
      if (api.cuGraphKernelNodeGetParams(node, &p) == CUDA_SUCCESS && p.func &&
          api.cuFuncGetName(&name, p.func) == CUDA_SUCCESS && name)
        entry.label += " '" + std::string(name) + "'";
    }
    t.nodes.push_back(std::move(entry));
  }
  std::size_t e = 0;
  NANOCUDA_CALL(cuGraphGetEdges, what, graph, nullptr, nullptr, nullptr, &e);
  std::vector<CUgraphNode> from(e), to(e);
  if (e) NANOCUDA_CALL(cuGraphGetEdges, what, graph, from.data(), to.data(), nullptr, &e);
  for (std::size_t i = 0; i < e; ++i) t.edges.emplace_back(t.index_of(from[i]), t.index_of(to[i]));
  return t;
}

std::size_t GraphTopology::index_of(CUgraphNode node) const noexcept {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].handle == node) return i;
  return nodes.size();
}

std::string GraphTopology::to_string() const {
  std::string s = std::to_string(nodes.size()) + (nodes.size() == 1 ? " node" : " nodes");
  // Large graphs list their first nodes and edges only: this text goes into messages.
  constexpr std::size_t kShown = 24;
  for (std::size_t i = 0; i < nodes.size() && i < kShown; ++i)
    s += (i ? ", [" : ": [") + std::to_string(i) + "] " + nodes[i].label;
  if (nodes.size() > kShown) s += ", ...";
  s += "; edges:";
  if (edges.empty()) s += " none";
  for (std::size_t i = 0; i < edges.size() && i < kShown; ++i)
    s += (i ? ", " : " ") + std::to_string(edges[i].first) + "->" + std::to_string(edges[i].second);
  if (edges.size() > kShown) s += ", ... (" + std::to_string(edges.size()) + " edges)";
  return s;
}

unsigned GraphDebugPrintOptions::flags() const noexcept {
  unsigned f = 0;
  const bool bits[] = {verbose, runtime_types, kernel_node_params, memcpy_node_params,
                       memset_node_params, host_node_params, event_node_params,
                       ext_semas_signal_node_params, ext_semas_wait_node_params,
                       kernel_node_attributes, handles, mem_alloc_node_params,
                       mem_free_node_params, batch_mem_op_node_params, extra_topo_info,
                       conditional_node_params};
  // Field i is CU_GRAPH_DEBUG_DOT_FLAGS bit i (VERBOSE = 1<<0 ... CONDITIONAL = 1<<15).
  for (unsigned i = 0; i < sizeof bits / sizeof bits[0]; ++i)
    if (bits[i]) f |= 1u << i;
  return f;
}

}  // namespace nanocuda
