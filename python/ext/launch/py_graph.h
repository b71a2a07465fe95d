// The Python Graph object's state, shared by the Graph and GraphBuilder bindings.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch/arg_pack.h"
#include "nanocuda/core/kept_stream.h"
#include "nanocuda/launch/graph.h"

namespace nanocuda::py {

struct PyGraph {
  std::optional<Graph> graph;
  std::optional<KeptStream> stream;  // the captured stream; the default for launch()
  bool capturing = false;
  bool closed = false;  // close() called (and no capture since)
  std::uint32_t epoch = 0;  // bumped when `graph` is replaced: graph[node] views' cached indexes expire
  std::vector<std::vector<ArgSlot>> slots;  // per kernel node, for update()

  Graph& ready(const char* where) {
    if (!graph) [[unlikely]] {
      if (closed)
        throw nanobind::value_error((std::string(where) + ": the graph is closed (close() was called)").c_str());
      throw nanobind::value_error((std::string(where) + ": the graph is empty; capture work first "
                                                        "(with graph.capture(stream): ...)").c_str());
    }
    return *graph;
  }
  // Takes `g`; the per-node argument caches are sized on the first update().
  void set(Graph g) {
    slots.clear();
    graph.emplace(std::move(g));
    closed = false;
    ++epoch;
  }
  // Kernel node `index`'s argument-kind slots (`index` in range): sized on first use.
  [[gnu::always_inline]] ArgSlot* slots_for(std::size_t index) {
    if (index < slots.size() && !slots[index].empty()) [[likely]] return slots[index].data();
    return size_slots(index);
  }
  [[gnu::noinline]] ArgSlot* size_slots(std::size_t index) {
    const auto& nodes = graph->kernel_nodes();
    if (slots.size() != nodes.size()) slots.resize(nodes.size());
    slots[index].resize(nodes[index].layout.count() + 1);
    return slots[index].data();
  }
};

// update_kernel_args' cold case: the node's buffer is in use by an update still packing (an
// argument's conversion ran user code that updated the node again): storage of its own.
[[gnu::noinline]] void pack_and_set_nested(Graph& graph, std::size_t index, PyObject* const* args,
                                           std::size_t n);

// New arguments for kernel node `index` (in range) of `graph` (g's): packed and checked as a
// launch's into the node's own buffer, then one driver call (Graph::try_pack_kernel_params).
// Graph.update(i, *args) and graph[node].update(args=) call it; inlined into them (a call
// less per update).
[[gnu::always_inline]] inline void update_kernel_args(PyGraph& g, Graph& graph, std::size_t index,
                                                      PyObject* const* args, std::size_t n) {
  ArgSlot* slots = g.slots_for(index);
  const int device = graph.device().ordinal();
  if (!graph.try_pack_kernel_params(index, [&](ParamPacker& packer) __attribute__((always_inline)) {
        pack_args(packer, args, n, device, slots);
      })) [[unlikely]]
    pack_and_set_nested(graph, index, args, n);
}

// Installs the METH_FASTCALL update() of nanocuda.graph.ExecutableKernelNode (graph[node] views),
// through _internal.install_exec_kernel_update.
void bind_graph_exec_node(nanobind::module_& m);

// A host-node function and its data (the returned pointer) that call the Python callable `fn`
// with the GIL; an exception it raises is reported by the next checked call.
std::shared_ptr<void> make_py_callback(nanobind::handle fn, CUhostFn* run);

// Registers GraphDefinition's core (_GraphDef) and the GraphDefinition node-view hooks.
void bind_graph_definition(nanobind::module_& m);

// Registers GraphBuilder, ConditionalHandle, GraphCompleteOptions, GraphDebugPrintOptions and
// Device/Stream.create_graph_builder (after Graph is bound).
void bind_graph_builder(nanobind::module_& m);

}  // namespace nanocuda::py
