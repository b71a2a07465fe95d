// Python bindings for CUDA graphs: capture as a context manager, replay, argument update.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <optional>

#include "launch/arg_pack.h"
#include "launch/py_graph.h"
#include "nanocuda/launch/graph_builder.h"
#include "nanocuda/launch/graph_definition.h"
#include "bindings.h"
#include "core/py_size.h"
#include "interop/interop.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/launch/graph.h"
#include "fastpath/fastcall.h"
#include "fastpath/py_int.h"
#include "nanocuda/launch/param_buffer.h"

namespace nb = nanobind;

namespace nanocuda::py {

// A call that arrives while an update of the same node is still packing (an argument's
// conversion ran user code that updated the node again): its own storage and slots, as the
// Launcher's nested call has. The heap is fine here.
void pack_and_set_nested(Graph& graph, std::size_t index, PyObject* const* args, std::size_t n) {
  const GraphKernelNode& node = graph.kernel_nodes()[index];
  ParamBuffer buffer(node.layout);
  std::vector<ArgSlot> slots(node.layout.count() + 1);
  ParamPacker packer(node.layout, node.name, buffer.data(), buffer.pointers());
  pack_args(packer, args, n, graph.device().ordinal(), slots.data());
  graph.set_kernel_params(index, buffer.pointers());
}

namespace {

PyTypeObject* g_stream_type = nullptr;

// Graph.launch is a METH_FASTCALL method: replay is ~1 µs, so the ~30-40 ns of generic
// dispatch and a Stream copy would be a visible share of it.
PyObject* graph_launch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs > 1) throw nb::type_error("Graph.launch(stream=None): takes at most one argument");
  PyGraph& g = *nb::inst_ptr<PyGraph>(self);
  Graph& graph = g.ready("Graph.launch");
  if (nargs == 0 || args[0] == Py_None) {
    if (!g.stream)  // instantiated from a GraphDefinition: no captured stream to default to
      throw nb::type_error("Graph.launch: this graph was not captured on a stream; pass the stream to launch on");
    graph.launch(*g.stream);
  } else if (Py_TYPE(args[0]) == g_stream_type) {
    graph.launch(nb::inst_ptr<PyStream>(args[0])->ref("Graph.launch"));
  } else {
    graph.launch(to_stream(nb::handle(args[0]), "Graph.launch"));
  }
  Py_RETURN_NONE;
}

PyMethodDef g_graph_launch_def = fastcall_method<graph_launch>(
    "launch", "launch(stream=None)\n--\n\nReplay on `stream` (default: the captured one).");

// update(source): a whole new definition of the same shape, through cuGraphExecUpdate.
void update_whole(PyGraph& g, Graph& graph, nb::handle target) {
  if (nb::isinstance<GraphBuilder>(target)) {
    auto& b = nb::cast<GraphBuilder&>(target);
    // The first sentences are cuda.core's wording (users match on them).
    if (b.is_closed())
      throw nb::value_error(("Source graph builder has been closed. Graph.update: " + b.describe()).c_str());
    if (!b.is_built() || b.kind() != GraphBuilder::Kind::Primary)
      throw nb::value_error(("Graph has not finished building. Graph.update: " + b.describe() +
                             " is unfinished; call end_building() first").c_str());
    graph.update(b.graph(), b.definition_owner());
  } else if (nb::hasattr(target, "_core") && nb::isinstance<GraphDefinition>(target.attr("_core"))) {
    auto& d = nb::cast<GraphDefinition&>(target.attr("_core"));  // nanocuda.graph.GraphDefinition
    d.update(graph);  // the Graph then holds what d's nodes use, not the old definition's
  } else if (nb::isinstance<PyGraph>(target)) {
    Graph& other = nb::cast<PyGraph&>(target).ready("Graph.update");
    graph.update(other.definition(), other.definition_owner());
  } else {
    throw nb::type_error(("Graph.update: expected GraphBuilder or GraphDefinition (or a Graph, "
                          "or a kernel node index), got " + std::string(Py_TYPE(target.ptr())->tp_name)).c_str());
  }
  g.set(std::move(*g.graph));
}

// update(index, *args): the index checked, then update_kernel_args (shared with graph[node].update).
NANOCUDA_FASTCALL_BODY void update_node(PyGraph& g, Graph& graph, PyObject* target, PyObject* const* args,
                                        std::size_t n) {
  const std::size_t count = graph.kernel_nodes().size();
  long long at = -1;
  if (!read_small_int(target, &at) || at < 0 || static_cast<unsigned long long>(at) >= count) [[unlikely]] {
    throw nb::index_error(("Graph.update: no kernel node " +
                           nb::cast<std::string>(nb::repr(nb::handle(target))) + " (the graph has " +
                           std::to_string(count) + ")").c_str());
  }
  update_kernel_args(g, graph, static_cast<std::size_t>(at), args, n);
}

// Graph.update is a METH_FASTCALL method: updating the nodes of a graph is a loop of these
// calls, and nanobind's `*args` dispatch (an argument tuple, an overload pass and an index
// cast per call) cost about as much as packing the arguments (bench graphs).
PyObject* graph_update(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject* target = nargs > 0 ? args[0] : nullptr;
  if (kwnames && PyTuple_GET_SIZE(kwnames) != 0) {
    // Only `update(target=source)` may use a keyword (as the nanobind signature allowed).
    if (nargs != 0 || PyTuple_GET_SIZE(kwnames) != 1 ||
        PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "target") != 0)
      throw nb::type_error("Graph.update(index, *args) / update(source): the only keyword is target=");
    target = args[0];
  }
  if (!target)
    throw nb::type_error("Graph.update(index, *args) / update(source): missing the node index or source");
  PyGraph& g = *nb::inst_ptr<PyGraph>(self);
  Graph& graph = g.ready("Graph.update");
  if (PyLong_Check(target)) [[likely]] {
    update_node(g, graph, target, args + 1, static_cast<std::size_t>(nargs > 0 ? nargs - 1 : 0));
  } else {
    if (nargs > 1)
      throw nb::type_error("Graph.update(source): takes no further arguments when "
                           "given a GraphBuilder or Graph");
    update_whole(g, graph, target);
  }
  Py_RETURN_NONE;
}

PyMethodDef g_graph_update_def = fastcall_method<graph_update>(
    "update",
    "update(target, *args)\n--\n\n"
    "With an int `target`: give that kernel node the new arguments `args` (checked like a\n"
    "launch). With a finished GraphBuilder or a Graph of the same shape: make this\n"
    "instantiated graph run it through cuGraphExecUpdate, without instantiating again; a\n"
    "ValueError names the node that prevents it.");

}  // namespace

void bind_graph(nb::module_& m) {
  nb::class_<PyGraph>(m, "Graph",
                      "A CUDA graph: capture work on a stream once, replay it cheaply.\n\n"
                      "Example::\n\n"
                      "    graph = nanocuda.Graph()\n"
                      "    with graph.capture(stream):\n"
                      "        launcher(x, y, n)\n"
                      "    graph.launch()          # replays on the captured stream\n"
                      "    graph.update(0, x2, y2, n)  # new arguments for kernel node 0")
      .def(nb::init<>())
      .def("capture", [](nb::handle self, nb::handle stream) {
             auto& g = nb::cast<PyGraph&>(self);
             if (g.capturing) throw nb::value_error("Graph.capture: already capturing");
             g.stream = to_stream(stream, "Graph.capture");
             return nb::borrow(self);
           }, nb::arg("stream"), "Select the stream to capture; use as `with graph.capture(s):`.")
      .def("__enter__", [](nb::handle self) {
             auto& g = nb::cast<PyGraph&>(self);
             if (!g.stream) throw nb::value_error("Graph: use `with graph.capture(stream):`");
             Graph::begin_capture(*g.stream);
             g.capturing = true;
             return nb::borrow(self);
           })
      .def("__exit__", [](PyGraph& g, nb::handle exc_type, nb::handle, nb::handle) -> bool {
             if (!g.capturing || !g.stream)  // a direct call: no with-block is open
               throw nb::value_error("Graph.__exit__: the graph is not capturing; use `with graph.capture(stream):`");
             g.capturing = false;
             Graph captured = Graph::end_capture(*g.stream);
             if (!exc_type.is_none()) return false;  // discard the partial graph, re-raise
             g.set(std::move(captured));
             return false;
           }, nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("traceback").none())
      .def_prop_ro("node_count", [](PyGraph& g) { return g.ready("Graph.node_count").node_count(); },
                   "Number of nodes in the captured graph.")
      .def_prop_ro("kernel_nodes", [](PyGraph& g) {
             std::vector<std::string> names;
             for (const auto& k : g.ready("Graph.kernel_nodes").kernel_nodes()) names.push_back(k.name);
             return names;
           }, "Names of the captured kernel launches, in node order.")
      .def("upload", [](PyGraph& g, nb::handle stream) {
             Graph& graph = g.ready("Graph.upload");
             if (stream.is_none() && !g.stream)  // instantiated from a GraphDefinition
               throw nb::type_error("Graph.upload: this graph was not captured on a stream; pass the stream to upload on");
             graph.upload(stream.is_none() ? g.stream->ref() : to_stream(stream, "Graph.upload"));
           }, nb::arg("stream").none() = nb::none(),
           "Upload the graph's device work on `stream` ahead of its first launch (cuGraphUpload).")
      .def("debug_dot_print", [](PyGraph& g, const std::string& path,
                                 nb::handle options) {
             g.ready("Graph.debug_dot_print").debug_dot_print(
                 path, options_arg<GraphDebugPrintOptions>(options, "Graph.debug_dot_print", "GraphDebugPrintOptions"));
           }, nb::arg("path"), nb::arg("options").none() = nb::none(),
           "Write the graph's definition as a Graphviz dot file (cuGraphDebugDotPrint).")
      .def("__getitem__", [](nb::handle g, nb::handle node) {  // the views are Python (nanocuda.graph)
             return nb::module_::import_("nanocuda.graph").attr("_graph_getitem")(g, node);
           }, nb::arg("node"),
           "graph[node]: a view of definition node `node` in this executable graph, whose update()\n"
           "(and enable()/disable() for kernel, memset and memcpy nodes) changes only this graph.")
      .def_prop_ro("topology", [](PyGraph& g) { return g.ready("Graph.topology").topology(); },
           "The nodes and edges of the definition, as text.")
      .def("close", [](PyGraph& g) {
             if (g.capturing) throw nb::value_error("Graph.close: the graph is capturing; leave the with-block first");
             if (g.graph && g.graph->is_packing())
               throw nb::value_error("Graph.close: a kernel-node update of this graph is packing its arguments "
                                     "(an argument's conversion called back into the graph); close it after");
             g.slots.clear();
             ++g.epoch;
             g.graph.reset();  // destroys the executable graph (its definition goes with its last owner)
             g.closed = true;
           }, "Destroy the executable graph now (safe to call twice); later uses raise ValueError.")
      .def_prop_ro("is_closed", [](const PyGraph& g) { return g.closed; }, "True after close().")
      .def_prop_ro("handle", [](PyGraph& g) -> std::uintptr_t {
             if (g.closed) return 0;  // cuda.core: a closed graph's handle reads 0
             return reinterpret_cast<std::uintptr_t>(g.ready("Graph.handle").exec_handle());
           }, "The CUgraphExec handle as an int (0 after close()).")
      .def_prop_ro("stream", [](PyGraph& g) -> nb::object {
             return g.stream ? stream_object(*g.stream) : nb::none();
           },
           "The default stream of launch() (the captured or building stream).")
      .def("__repr__", [](PyGraph& g) {
        return g.graph ? "<nanocuda." + g.graph->describe() + ": " + g.graph->topology() + ">"
                       : std::string("<nanocuda.Graph (empty)>");
      });

  g_stream_type = reinterpret_cast<PyTypeObject*>(nb::type<PyStream>().ptr());
  nb::handle graph_type = nb::type<PyGraph>();
  install_method(graph_type, &g_graph_launch_def);
  install_method(graph_type, &g_graph_update_def);

  bind_graph_builder(m);
  bind_graph_definition(m);
  bind_graph_exec_node(m);
}

}  // namespace nanocuda::py
