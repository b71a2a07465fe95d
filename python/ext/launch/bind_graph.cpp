// Python bindings for CUDA graphs: capture as a context manager, replay, argument update.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <optional>

#include "launch/arg_pack.h"
#include "bindings.h"
#include "interop/interop.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/launch/graph.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

struct PyGraph {
  std::optional<Graph> graph;
  std::optional<Stream> stream;  // the captured stream; the default for launch()
  bool capturing = false;
  std::vector<std::vector<ArgSlot>> slots;  // per kernel node, for update()

  Graph& ready(const char* where) {
    if (!graph)
      throw nb::value_error((std::string(where) + ": the graph is empty; capture work first "
                                                  "(with graph.capture(stream): ...)").c_str());
    return *graph;
  }
};

PyTypeObject* g_stream_type = nullptr;

// Graph.launch is a METH_FASTCALL method: replay is ~1 µs, so the ~30-40 ns of generic
// dispatch and a Stream copy would be a visible share of it.
PyObject* graph_launch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  try {
    if (nargs > 1) throw nb::type_error("Graph.launch(stream=None): takes at most one argument");
    PyGraph& g = *nb::inst_ptr<PyGraph>(self);
    Graph& graph = g.ready("Graph.launch");
    if (nargs == 0 || args[0] == Py_None) {
      graph.launch(*g.stream);
    } else if (Py_TYPE(args[0]) == g_stream_type) {
      graph.launch(*nb::inst_ptr<Stream>(args[0]));
    } else {
      graph.launch(to_stream(nb::handle(args[0]), "Graph.launch"));
    }
    Py_RETURN_NONE;
  } catch (...) {
    set_error_from_current_exception();
    return nullptr;
  }
}

PyMethodDef g_graph_launch_def = {
    "launch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(graph_launch)),
    METH_FASTCALL, "launch(stream=None)\n--\n\nReplay on `stream` (default: the captured one)."};

}  // namespace

void bind_graph(nb::module_& m) {
  nb::class_<PyGraph>(m, "Graph",
                      "A CUDA graph: capture work on a stream once, replay it cheaply. Example::\n\n"
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
             g.capturing = false;
             Graph captured = Graph::end_capture(*g.stream);
             if (!exc_type.is_none()) return false;  // discard the partial graph, re-raise
             g.slots.assign(captured.kernel_nodes().size(), {});
             for (std::size_t i = 0; i < g.slots.size(); ++i)
               g.slots[i].resize(captured.kernel_nodes()[i].layout.count() + 1);
             g.graph.emplace(std::move(captured));
             return false;
           }, nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("traceback").none())
      .def_prop_ro("node_count", [](PyGraph& g) { return g.ready("Graph.node_count").node_count(); },
                   "Number of nodes in the captured graph.")
      .def_prop_ro("kernel_nodes", [](PyGraph& g) {
             std::vector<std::string> names;
             for (const auto& k : g.ready("Graph.kernel_nodes").kernel_nodes()) names.push_back(k.name);
             return names;
           }, "Names of the captured kernel launches, in node order.")
      .def("update", [](PyGraph& g, std::size_t index, nb::args args) {
             Graph& graph = g.ready("Graph.update");
             if (index >= graph.kernel_nodes().size())
               throw nb::index_error(("Graph.update: no kernel node " + std::to_string(index) +
                                      " (the graph has " + std::to_string(graph.kernel_nodes().size()) +
                                      ")").c_str());
             const GraphKernelNode& node = graph.kernel_nodes()[index];
             std::vector<unsigned char> buf(node.layout.total_size() + 16);
             auto* aligned = reinterpret_cast<unsigned char*>(
                 (reinterpret_cast<std::uintptr_t>(buf.data()) + 15) & ~std::uintptr_t{15});
             std::vector<void*> ptrs(node.layout.count() + 1);
             ParamPacker packer(node.layout, node.name, aligned, ptrs.data());
             std::vector<PyObject*> raw;
             for (nb::handle a : args) raw.push_back(a.ptr());
             pack_args(packer, raw.data(), raw.size(), g.stream->device().ordinal(),
                       g.slots[index].data());
             graph.set_kernel_params(index, ptrs.data());  // the driver copies the bytes
           }, nb::arg("index"), nb::arg("args"),
           "Give kernel node `index` new arguments without capturing again.")
      .def("__repr__", [](PyGraph& g) {
        return g.graph ? "<nanocuda." + g.graph->describe() + ">" : std::string("<nanocuda.Graph (empty)>");
      });

  g_stream_type = reinterpret_cast<PyTypeObject*>(nb::type<Stream>().ptr());
  nb::handle graph_type = nb::type<PyGraph>();
  PyObject* launch = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(graph_type.ptr()),
                                       &g_graph_launch_def);
  if (!launch || PyObject_SetAttrString(graph_type.ptr(), "launch", launch) != 0)
    throw nb::python_error();
  Py_DECREF(launch);

  m.def("_cpp_graph_burst", [](PyGraph& g, int count) {
    Graph& graph = g.ready("_cpp_graph_burst");
    CUstream h = g.stream->handle();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i) graph.launch_unchecked(h);
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
  }, nb::arg("graph"), nb::arg("count"),
  "Native C++ loop of `count` cuGraphLaunch calls; returns nanoseconds (benchmark baseline).");
}

}  // namespace nanocuda::py
