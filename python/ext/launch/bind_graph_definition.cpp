// Python bindings for GraphDefinition's core (_internal.GraphDef: node handles as ints); the cuda.core
// classes over it (GraphDefinition, GraphNode and its kinds) are in nanocuda/_graph_definition.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>

#include "bindings.h"
#include "core/py_size.h"
#include "interop/interop.h"
#include "launch/graph_definition_launch.h"
#include "launch/py_graph.h"
#include "nanocuda/compile/kernel.h"
#include "nanocuda/launch/graph_builder.h"
#include "nanocuda/launch/graph_definition.h"
#include "nanocuda/launch/graph_topology.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

using Deps = GraphDefinition::Deps;

CUgraphNode node_of(std::uintptr_t h) { return reinterpret_cast<CUgraphNode>(h); }
std::uintptr_t id_of(CUgraphNode n) { return reinterpret_cast<std::uintptr_t>(n); }

Deps deps_of(const std::vector<std::uintptr_t>& v) {
  Deps d;
  d.reserve(v.size());
  for (auto h : v) d.push_back(node_of(h));
  return d;
}

// The executable graph of an update through Graph[node] (None: the definition itself).
Graph* exec_of(nb::handle graph) {
  if (graph.is_none()) return nullptr;
  return &nb::cast<PyGraph&>(graph).ready("Graph node update");
}

// What a node's new parameters use: held by the node, or with `exec` by that executable only.
void keep_for(GraphDefinition& g, CUgraphNode node, Graph* exec, std::shared_ptr<void> object) {
  if (exec)
    exec->keep_alive(std::move(object));
  else
    g.keep_alive(std::move(object), node);
}

// Packs `args` against `kernel`'s layout as a launch does, then adds the node (the driver
// copies the bytes). With `node` set, replaces that kernel node's parameters instead.
std::uintptr_t kernel_node(GraphDefinition& g, const Deps& deps, const LaunchConfig& config,
                           const Kernel& kernel, nb::tuple args, CUgraphNode node,
                           const Graph* exec = nullptr) {
  const ParamLayout& layout = kernel.param_layout();
  HeapPackedArgs packed(layout, kernel.name(), args, g.device().ordinal());
  if (!node) return id_of(g.add_kernel(deps, config, kernel, packed.params()));
  const GraphNodeRecord* r = g.record(node);
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_KERNEL;
  if (r) p = r->params;
  p.kernel.func = kernel.function(*g.device().context());
  p.kernel.gridDimX = config.grid.x;
  p.kernel.gridDimY = config.grid.y;
  p.kernel.gridDimZ = config.grid.z;
  p.kernel.blockDimX = config.block.x;
  p.kernel.blockDimY = config.block.y;
  p.kernel.blockDimZ = config.block.z;
  p.kernel.sharedMemBytes = config.shared_mem;
  p.kernel.kernelParams = packed.params();
  p.kernel.extra = nullptr;
  p.kernel.kern = nullptr;
  g.set_params(node, p, "KernelNode.update", exec);
  return id_of(node);
}

GraphMemoryType memory_type_of(const std::string& s) {
  if (s == "device") return GraphMemoryType::Device;
  if (s == "host") return GraphMemoryType::Host;
  if (s == "managed") return GraphMemoryType::Managed;
  throw nb::value_error(("GraphDefinition.allocate: memory_type must be 'device', 'host' or "
                         "'managed', got '" + s + "'").c_str());
}

const char* memory_type_name(GraphMemoryType t) {
  return t == GraphMemoryType::Host ? "host" : t == GraphMemoryType::Managed ? "managed" : "device";
}

// The parameters a node was built with, as a dict (None for nodes not added here).
nb::object record_dict(const GraphDefinition& g, std::uintptr_t h) {
  const GraphNodeRecord* r = g.record(node_of(h));
  if (!r) return nb::none();
  nb::dict d;
  const CUgraphNodeParams& p = r->params;
  switch (r->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
      d["grid"] = nb::make_tuple(p.kernel.gridDimX, p.kernel.gridDimY, p.kernel.gridDimZ);
      d["block"] = nb::make_tuple(p.kernel.blockDimX, p.kernel.blockDimY, p.kernel.blockDimZ);
      d["shmem_size"] = p.kernel.sharedMemBytes;
      break;
    case CU_GRAPH_NODE_TYPE_MEMSET:
      d["dptr"] = p.memset.dst;
      d["value"] = p.memset.value;
      d["element_size"] = p.memset.elementSize;
      d["width"] = p.memset.width;
      d["height"] = p.memset.height;
      d["pitch"] = p.memset.pitch;
      break;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      d["dst"] = p.memcpy.copyParams.dstDevice;
      d["src"] = p.memcpy.copyParams.srcDevice;
      d["size"] = p.memcpy.copyParams.WidthInBytes;
      break;
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
      d["dptr"] = p.alloc.dptr;
      d["bytesize"] = p.alloc.bytesize;
      d["device_id"] = p.alloc.poolProps.location.id;
      d["memory_type"] = memory_type_name(r->memory_type);
      d["peer_access"] = nb::tuple(nb::cast(r->peers));
      break;
    case CU_GRAPH_NODE_TYPE_MEM_FREE: d["dptr"] = p.free.dptr; break;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
      d["condition"] = p.conditional.handle;
      d["cond_type"] = p.conditional.type == CU_GRAPH_COND_TYPE_WHILE    ? "while"
                       : p.conditional.type == CU_GRAPH_COND_TYPE_SWITCH ? "switch"
                                                                         : "if";
      d["size"] = p.conditional.size;
      break;
    default: break;
  }
  return d;
}

// The driver dropped a graph's hold on its keepalives (on a thread of its own): release them
// on the main thread with the GIL, once per burst (the pending-call queue is small).
std::atomic<bool> g_drain_scheduled{false};
int drain_dropped(void*) {
  g_drain_scheduled.store(false);
  GraphDefinition::release_dropped();
  return 0;
}
void schedule_drain() {
  if (!Py_IsInitialized()) return;  // at exit: nothing left to release them for
  if (!g_drain_scheduled.exchange(true) && Py_AddPendingCall(drain_dropped, nullptr) != 0)
    g_drain_scheduled.store(false);  // queue full: the next GraphDefinition call releases them
}

}  // namespace

void bind_graph_definition(nb::module_& m) {
  GraphDefinition::set_dropped_hook(schedule_drain);
  bind_graph_definition_launch(m);
  nb::module_ internal = internal_module(m);
  nb::class_<GraphDefinition>(internal, "GraphDef",
      "The core of nanocuda.graph.GraphDefinition: one graph of a definition tree, nodes as int "
      "handles. Use nanocuda.graph.GraphDefinition.")
      .def_static("create", &GraphDefinition::create, nb::arg("device"),
                  "A new empty graph whose work runs on `device`.")
      .def("add_empty", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps) {
             return id_of(g.add_empty(deps_of(deps)));
           }, nb::arg("deps"), "Add an empty node after `deps`; returns its handle.")
      .def("add_kernel", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps,
                            const LaunchConfig& config, const Kernel& kernel, nb::tuple args) {
             nb::object py = nb::find(kernel);
             return add_kernel_node(g, deps_of(deps), config, kernel, py.ptr(), args);
           }, nb::arg("deps"), nb::arg("config"), nb::arg("kernel"), nb::arg("args"),
           "Add a kernel node; `args` are packed and checked as a launch's are. The graph keeps "
           "`kernel` alive (once, however many nodes run it).")
      .def("set_kernel", [](GraphDefinition& g, std::uintptr_t node, const LaunchConfig& config,
                            const Kernel& kernel, nb::tuple args, nb::handle graph) {
             kernel_node(g, {}, config, kernel, args, node_of(node), exec_of(graph));
           }, nb::arg("node"), nb::arg("config"), nb::arg("kernel"), nb::arg("args"),
           nb::arg("graph").none() = nb::none(),
           "Replace a kernel node's configuration, kernel and arguments.")
      .def("add_memset", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps,
                            std::uint64_t dst, unsigned value, unsigned element_size,
                            std::size_t width, std::size_t height, std::size_t pitch) {
             return id_of(g.add_memset(deps_of(deps), dst, value, element_size, width, height, pitch));
           }, nb::arg("deps"), nb::arg("dst"), nb::arg("value"), nb::arg("element_size"),
           nb::arg("width"), nb::arg("height"), nb::arg("pitch"), "Add a memset node.")
      .def("add_memcpy", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps,
                            std::uint64_t dst, std::uint64_t src, std::size_t size) {
             return id_of(g.add_memcpy(deps_of(deps), dst, src, size));
           }, nb::arg("deps"), nb::arg("dst"), nb::arg("src"), nb::arg("size"),
           "Add a 1-D memcpy node (device or pinned host memory on either side).")
      .def("add_callback", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps, nb::handle fn) {
             CUhostFn run = nullptr;
             auto cb = make_py_callback(fn, &run);
             return id_of(g.add_host(deps_of(deps), run, cb.get(), cb));
           }, nb::arg("deps"), nb::arg("fn"), "Add a host node calling the Python callable `fn`.")
      .def("add_cfunc", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps,
                           std::uintptr_t fn, std::uintptr_t data, nb::object keep) {
             return id_of(g.add_host(deps_of(deps), reinterpret_cast<CUhostFn>(fn),
                                     reinterpret_cast<void*>(data), hold_py(keep)));
           }, nb::arg("deps"), nb::arg("fn"), nb::arg("data"), nb::arg("keep"),
           "Add a host node calling the C function at address `fn` with `data`; `keep` stays "
           "alive with the graph.")
      .def("add_event_record", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps, const Event& e) {
             return id_of(g.add_event_record(deps_of(deps), e));
           }, nb::arg("deps"), nb::arg("event"), "Add an event-record node.")
      .def("add_event_wait", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps, const Event& e) {
             return id_of(g.add_event_wait(deps_of(deps), e));
           }, nb::arg("deps"), nb::arg("event"), "Add an event-wait node.")
      .def("add_alloc", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps,
                           std::size_t size, int device, const std::string& type,
                           const std::vector<int>& peers) {
             return id_of(g.add_alloc(deps_of(deps), size, device, memory_type_of(type), peers));
           }, nb::arg("deps"), nb::arg("size"), nb::arg("device"), nb::arg("memory_type"),
           nb::arg("peers"), "Add a memory-allocation node; record(node)['dptr'] is its address.")
      .def("add_free", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps, std::uint64_t ptr) {
             return id_of(g.add_free(deps_of(deps), ptr));
           }, nb::arg("deps"), nb::arg("dptr"), "Add a memory-free node.")
      .def("add_child", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps, const GraphDefinition& child) {
             return id_of(g.add_child(deps_of(deps), child));
           }, nb::arg("deps"), nb::arg("child"), "Add a child-graph node holding a copy of `child`.")
      .def("add_conditional", [](GraphDefinition& g, const std::vector<std::uintptr_t>& deps,
                                 std::uint64_t handle, const std::string& kind, unsigned size) {
             CUgraphConditionalNodeType t = kind == "while"    ? CU_GRAPH_COND_TYPE_WHILE
                                            : kind == "switch" ? CU_GRAPH_COND_TYPE_SWITCH
                                                               : CU_GRAPH_COND_TYPE_IF;
             std::vector<GraphDefinition> bodies;
             CUgraphNode n = g.add_conditional(deps_of(deps), handle, t, size, bodies);
             return std::make_pair(id_of(n), bodies);
           }, nb::arg("deps"), nb::arg("handle"), nb::arg("kind"), nb::arg("size"),
           "Add a conditional node ('if', 'while' or 'switch'); returns (node, bodies).")
      .def("create_condition", [](GraphDefinition& g, std::optional<unsigned> dv) {
             return g.create_condition(dv);
           }, nb::arg("default_value").none(), "A new condition handle of this tree.")
      .def("child_graph", [](const GraphDefinition& g, std::uintptr_t node) {
             return g.child_graph(node_of(node));
           }, nb::arg("node"), "A view of a child-graph node's graph.")
      .def("set_memset", [](GraphDefinition& g, std::uintptr_t node, std::uint64_t dst, unsigned value,
                            unsigned element_size, std::size_t width, std::size_t height, std::size_t pitch,
                            nb::handle graph) {
             CUgraphNodeParams p{};
             if (const GraphNodeRecord* r = g.record(node_of(node))) p = r->params;
             p.type = CU_GRAPH_NODE_TYPE_MEMSET;
             p.memset.dst = dst;
             p.memset.value = value;
             p.memset.elementSize = element_size;
             p.memset.width = width;
             p.memset.height = height;
             p.memset.pitch = height > 1 ? pitch : 0;
             p.memset.ctx = g.device().context()->handle();
             g.set_params(node_of(node), p, "MemsetNode.update", exec_of(graph));
           }, nb::arg("node"), nb::arg("dst"), nb::arg("value"), nb::arg("element_size"),
           nb::arg("width"), nb::arg("height"), nb::arg("pitch"), nb::arg("graph").none() = nb::none(),
           "Replace a memset node's parameters (in `graph` only, when given).")
      .def("set_memcpy", [](GraphDefinition& g, std::uintptr_t node, std::uint64_t dst,
                            std::uint64_t src, std::size_t size, nb::handle graph) {
             CUgraphNodeParams p{};
             if (const GraphNodeRecord* r = g.record(node_of(node))) p = r->params;
             p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
             p.memcpy.copyCtx = g.device().context()->handle();
             p.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
             p.memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
             p.memcpy.copyParams.srcDevice = src;
             p.memcpy.copyParams.dstDevice = dst;
             p.memcpy.copyParams.WidthInBytes = size;
             p.memcpy.copyParams.Height = 1;
             p.memcpy.copyParams.Depth = 1;
             g.set_params(node_of(node), p, "MemcpyNode.update", exec_of(graph));
           }, nb::arg("node"), nb::arg("dst"), nb::arg("src"), nb::arg("size"),
           nb::arg("graph").none() = nb::none(), "Replace a memcpy node's parameters (in `graph` only, when given).")
      .def("set_event", [](GraphDefinition& g, std::uintptr_t node, const Event& e, nb::handle graph) {
             CUgraphNodeParams p{};
             p.type = GraphDefinition::node_type(node_of(node));
             if (p.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD)
               p.eventRecord.event = e.checked_handle("EventRecordNode.update");
             else
               p.eventWait.event = e.checked_handle("EventWaitNode.update");
             g.set_params(node_of(node), p, "EventNode.update", exec_of(graph));
           }, nb::arg("node"), nb::arg("event"), nb::arg("graph").none() = nb::none(),
           "Replace an event node's event (in `graph` only, when given).")
      .def("set_callback", [](GraphDefinition& g, std::uintptr_t node, nb::handle fn, nb::handle graph) {
             CUhostFn run = nullptr;
             auto cb = make_py_callback(fn, &run);
             CUgraphNodeParams p{};
             p.type = CU_GRAPH_NODE_TYPE_HOST;
             p.host.fn = run;
             p.host.userData = cb.get();
             Graph* exec = exec_of(graph);
             g.set_params(node_of(node), p, "HostCallbackNode.update", exec);
             keep_for(g, node_of(node), exec, std::move(cb));
           }, nb::arg("node"), nb::arg("fn"), nb::arg("graph").none() = nb::none(),
           "Make a host node call the Python callable `fn` (in `graph` only, when given).")
      .def("set_child", [](GraphDefinition& g, std::uintptr_t node, const GraphDefinition& child, nb::handle graph) {
             CUgraphNodeParams p{};
             p.type = CU_GRAPH_NODE_TYPE_GRAPH;
             p.graph.graph = child.handle();
             Graph* exec = exec_of(graph);
             g.set_params(node_of(node), p, "ChildGraphNode.update", exec);
             keep_for(g, node_of(node), exec, child.owner());
           }, nb::arg("node"), nb::arg("child"), nb::arg("graph").none() = nb::none(),
           "Make a child-graph node run a copy of `child` (in `graph` only, when given).")
      .def("nodes", [](const GraphDefinition& g) {
             std::vector<std::uintptr_t> out;
             for (CUgraphNode n : g.nodes()) out.push_back(id_of(n));
             return out;
           }, "Handles of the graph's nodes.")
      .def("edges", [](const GraphDefinition& g) {
             std::vector<std::pair<std::uintptr_t, std::uintptr_t>> out;
             for (auto [a, b] : g.edges()) out.emplace_back(id_of(a), id_of(b));
             return out;
           }, "The graph's edges as (from, to) handle pairs.")
      .def("contains", [](const GraphDefinition& g, std::uintptr_t n) { return g.contains(node_of(n)); },
           nb::arg("node"), "Whether the node is in this graph.")
      .def("connect", [](GraphDefinition& g, std::uintptr_t a, std::uintptr_t b, const char* call) {
             g.connect(node_of(a), node_of(b), call);
           }, nb::arg("src"), nb::arg("dst"), nb::arg("call"), "Add the edge src -> dst.")
      .def("disconnect", [](GraphDefinition& g, std::uintptr_t a, std::uintptr_t b, const char* call) {
             g.disconnect(node_of(a), node_of(b), call);
           }, nb::arg("src"), nb::arg("dst"), nb::arg("call"), "Remove the edge src -> dst.")
      .def("destroy_node", [](GraphDefinition& g, std::uintptr_t n) {
             std::vector<std::uintptr_t> gone;
             for (CUgraphNode m : g.destroy_node(node_of(n))) gone.push_back(id_of(m));
             return gone;
           }, nb::arg("node"),
           "Remove the node and its edges; returns the handles of the nodes gone with it.")
      .def_static("node_type", [](std::uintptr_t n) { return static_cast<int>(GraphDefinition::node_type(node_of(n))); },
                  nb::arg("node"), "The node's CUgraphNodeType value.")
      .def("record", &record_dict, nb::arg("node"),
           "The parameters the node was built with, as a dict; None for nodes not added here.")
      .def("keep_alive", [](GraphDefinition& g, nb::handle obj, std::uintptr_t node) {
             g.keep_alive(hold_py(obj), node ? node_of(node) : nullptr);
           }, nb::arg("obj"), nb::arg("node") = 0,
           "Keep `obj` alive as long as `node` (0: the graph) and Graphs made while it is there.")
      .def("instantiate", [](const GraphDefinition& g, const GraphCompleteOptions& options) {
             PyGraph out;
             out.set(g.instantiate(options));
             return out;
           }, nb::arg("options"), "Instantiate into a launchable nanocuda.Graph.")
      .def("debug_dot_print", &GraphDefinition::debug_dot_print, nb::arg("path"), nb::arg("options"),
           "Write the graph as GraphViz DOT.")
      .def("topology", &GraphDefinition::topology, "Nodes and edges, as text.")
      .def_prop_ro("handle", [](const GraphDefinition& g) {
             return g.is_valid() ? reinterpret_cast<std::uintptr_t>(g.handle()) : std::uintptr_t{0};
           }, "The CUgraph handle as an int (0 once destroyed with its owning node).")
      .def_prop_ro("is_valid", &GraphDefinition::is_valid,
                   "False once the node owning this graph (conditional body, child clone) is destroyed.")
      .def_prop_ro("tree_id", &GraphDefinition::tree_id, "The definition tree's process-unique number.")
      .def_prop_ro("device", &GraphDefinition::device, "The device the graph's work runs on.")
      .def("describe", &GraphDefinition::describe, "'GraphDefinition 0x... (3 nodes) on device 0'.");

  internal.def("builder_definition", [](const GraphBuilder& b) {
    constexpr const char* call = "GraphBuilder.graph_definition: ";
    if (b.is_closed()) throw std::runtime_error(std::string(call) + "the builder is closed");
    if (b.kind() == GraphBuilder::Kind::Forked)
      throw std::runtime_error(std::string(call) + "not available on a forked builder (from "
                               "split()); ask the builder it was split from");
    if (b.is_building())
      throw std::runtime_error(std::string(call) + "a capture is in progress; call end_building() first");
    if (!b.graph())
      throw std::runtime_error(std::string(call) + "called before begin_building(): nothing is built yet");
    return b.definition_view();  // knows the host-callback nodes' holds
  }, nb::arg("builder"), "The builder's graph as a _GraphDef view (GraphBuilder.graph_definition).");

  // Executable-graph node edits, for Graph[node] views.
  internal.def("graph_exec_set_enabled", [](PyGraph& pg, std::uintptr_t node, bool on) {
    pg.ready("Graph node").set_node_enabled(node_of(node), on);
  }, nb::arg("graph"), nb::arg("node"), nb::arg("enabled"), "Enable or disable a node of an executable graph.");
  internal.def("graph_exec_get_enabled", [](PyGraph& pg, std::uintptr_t node) {
    return pg.ready("Graph node").node_enabled(node_of(node));
  }, nb::arg("graph"), nb::arg("node"), "Whether a node of an executable graph is enabled.");
}

}  // namespace nanocuda::py
