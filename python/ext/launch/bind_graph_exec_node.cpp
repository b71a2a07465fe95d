// graph[node].update(args=...) for kernel nodes at C++ speed: a METH_FASTCALL update() on the
// Python class nanocuda.graph.ExecutableKernelNode that reads the view's __slots__ directly.
#include <nanobind/nanobind.h>
#include <structmember.h>  // PyMemberDef (Python 3.11 keeps it here)

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "bindings.h"
#include "fastpath/fastcall.h"
#include "fastpath/py_int.h"
#include "launch/arg_pack.h"
#include "launch/py_graph.h"
#include "nanocuda/compile/kernel.h"
#include "nanocuda/launch/graph_definition.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

constexpr const char* kCall = "ExecutableKernelNode.update";

// Where the Python views keep what update() reads (their __slots__ offsets), found once at
// install time from the classes' member descriptors, and the Python update() that handles
// everything but the hot case (errors of closed graphs and destroyed nodes are raised there).
struct ViewLayout {
  Py_ssize_t exec = 0, node = 0, index = 0;   // ExecutableKernelNode: _exec, _node, _index,
  Py_ssize_t stamp = 0;                         // _stamp
  Py_ssize_t graph = 0, handle = 0, valid = 0;  // GraphNode: _graph, _handle, _valid
  Py_ssize_t core = 0;                          // GraphDefinition: _core
  PyTypeObject* node_type = nullptr;            // GraphNode
  PyTypeObject* definition_type = nullptr;      // nanocuda.graph.GraphDefinition
  PyTypeObject* core_type = nullptr;            // _internal.GraphDef
  PyTypeObject* graph_type = nullptr;           // nanocuda.Graph
  PyObject* slow = nullptr;                     // ExecutableKernelNode._update
  PyObject* args_name = nullptr;                // interned "args", "config", "kernel"
  PyObject* config_name = nullptr;
  PyObject* kernel_name = nullptr;
};
ViewLayout g_view;

// Bumped whenever a definition node is destroyed (GraphNode.destroy): every view's cached index
// then expires, so a destroyed node is seen (its _valid) before the driver is given its handle.
std::uint64_t g_node_epoch = 0;

// What a view's cached index is valid for: its Graph's epoch and the node epoch. Small for the
// common case (one instantiation, nothing destroyed): a cached small int, no allocation.
long long stamp_of(const PyGraph& pg) {
  return static_cast<long long>(pg.epoch) | static_cast<long long>(g_node_epoch << 24);
}

Py_ssize_t slot_offset(nb::handle cls, const char* name) {
  nb::object d = cls.attr(name);
  if (Py_TYPE(d.ptr()) != &PyMemberDescr_Type)
    throw std::runtime_error(std::string("install_exec_kernel_update: ") + name + " is not a __slots__ member");
  return reinterpret_cast<PyMemberDescrObject*>(d.ptr())->d_member->offset;
}

// A __slots__ value (borrowed; nullptr when unset). `obj` must be of the class that has it.
PyObject* slot(PyObject* obj, Py_ssize_t offset) {
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + offset);
}

bool is_name(PyObject* name, PyObject* interned) {
  return name == interned || PyUnicode_Compare(name, interned) == 0;
}

// The Python update(self, *args, **kwargs), for every call the fast path does not take.
PyObject* call_slow(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  std::vector<PyObject*> all(static_cast<std::size_t>(total) + 1);
  all[0] = self;
  for (Py_ssize_t i = 0; i < total; ++i) all[static_cast<std::size_t>(i) + 1] = args[i];
  return PyObject_Vectorcall(g_view.slow, all.data(), static_cast<std::size_t>(nargs) + 1, kwnames);
}

// update(args=a_list): a tuple of it, so the items stay alive while packing (out of the hot
// path: the tuple's release would cost the tuple case a destructor).
[[gnu::noinline]] PyObject* update_from_list(PyGraph& pg, Graph& graph, std::size_t index, PyObject* list) {
  nb::object items = nb::steal(PyList_AsTuple(list));
  if (!items.is_valid()) return nullptr;
  update_kernel_args(pg, graph, index, &PyTuple_GET_ITEM(items.ptr(), 0),
                     static_cast<std::size_t>(PyTuple_GET_SIZE(items.ptr())));
  Py_RETURN_NONE;
}

// update(*, config=None, kernel=None, args=None). With only args (a tuple or list) on a live
// node of a live graph: the node's index (cached in the view's _index) -> pack into the
// node's cached slots -> Graph::set_kernel_params. Anything else goes to the Python update().
NANOCUDA_FASTCALL_BODY PyObject* exec_kernel_update(PyObject* self, PyObject* const* args, Py_ssize_t nargsf,
                                                  PyObject* kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs != 0 || !kwnames) return call_slow(self, args, nargsf, kwnames);
  PyObject* values = nullptr;
  // update(args=...) from code: the compiler's kwnames tuple holds the interned "args".
  if (PyTuple_GET_SIZE(kwnames) == 1 && PyTuple_GET_ITEM(kwnames, 0) == g_view.args_name) [[likely]] {
    values = args[0];
  } else {
    for (Py_ssize_t i = 0, nk = PyTuple_GET_SIZE(kwnames); i < nk; ++i) {
      PyObject* name = PyTuple_GET_ITEM(kwnames, i);
      PyObject* v = args[i];
      if (is_name(name, g_view.args_name)) values = v;
      else if (v != Py_None || !(is_name(name, g_view.config_name) || is_name(name, g_view.kernel_name)))
        return call_slow(self, args, nargsf, kwnames);
    }
  }
  if (!values || !(PyTuple_CheckExact(values) || PyList_CheckExact(values)))
    return call_slow(self, args, nargsf, kwnames);
  PyObject* exec = slot(self, g_view.exec);
  PyObject* node = slot(self, g_view.node);
  if (!exec || Py_TYPE(exec) != g_view.graph_type || !node) return call_slow(self, args, nargsf, kwnames);
  PyGraph& pg = *nb::inst_ptr<PyGraph>(exec);
  if (!pg.graph) return call_slow(self, args, nargsf, kwnames);  // raises: closed Graph
  Graph& graph = *pg.graph;
  // The node's index in graph.kernel_nodes(), cached in the view with the stamp it is valid
  // for: a hit reads only the view (not the node, its handle or its definition: on a GPU
  // machine each is a likely cache miss in a loop over many nodes). The Graph's kernel-node
  // order is fixed for its life (a whole-graph update keeps the handles in place).
  PyObject* cached = slot(self, g_view.index);
  PyObject* stamp = slot(self, g_view.stamp);
  // Read in place (fastpath/py_int.h): a hit costs two loads and compares, no conversion call.
  const std::size_t count = graph.kernel_nodes().size();
  long long index_value = -1, stamp_value = -1;
  bool hit = cached && stamp && PyLong_CheckExact(cached) && PyLong_CheckExact(stamp) &&
             read_small_int(stamp, &stamp_value) && stamp_value == stamp_of(pg) &&
             read_small_int(cached, &index_value) && index_value >= 0 &&
             static_cast<unsigned long long>(index_value) < count;
  std::size_t index = static_cast<std::size_t>(index_value);
  if (!hit) [[unlikely]] {
    if (!PyObject_TypeCheck(node, g_view.node_type)) return call_slow(self, args, nargsf, kwnames);
    PyObject* handle = slot(node, g_view.handle);
    if (slot(node, g_view.valid) != Py_True || !handle || !PyLong_CheckExact(handle))
      return call_slow(self, args, nargsf, kwnames);  // raises: destroyed node
    auto target = static_cast<CUgraphNode>(PyLong_AsVoidPtr(handle));
    if (!target && PyErr_Occurred()) return nullptr;
    PyObject* definition = slot(node, g_view.graph);
    PyObject* core = definition && PyObject_TypeCheck(definition, g_view.definition_type)
                         ? slot(definition, g_view.core) : nullptr;
    if (!core || Py_TYPE(core) != g_view.core_type || !nb::inst_ptr<GraphDefinition>(core)->is_valid())
      return call_slow(self, args, nargsf, kwnames);  // raises: the node's graph was destroyed
    index = graph.kernel_index(target, kCall);
    PyObject* fresh = PyLong_FromSize_t(index);
    PyObject* fresh_stamp = PyLong_FromLongLong(stamp_of(pg));
    if (!fresh || !fresh_stamp) {
      Py_XDECREF(fresh);
      Py_XDECREF(fresh_stamp);
      return nullptr;
    }
    PyObject*& at = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + g_view.index);
    PyObject*& at_stamp = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + g_view.stamp);
    Py_XSETREF(at, fresh);
    Py_XSETREF(at_stamp, fresh_stamp);
  }
  if (!PyTuple_CheckExact(values)) [[unlikely]] return update_from_list(pg, graph, index, values);
  update_kernel_args(pg, graph, index, &PyTuple_GET_ITEM(values, 0),
                     static_cast<std::size_t>(PyTuple_GET_SIZE(values)));
  Py_RETURN_NONE;
}

PyMethodDef g_update_def = fastcall_method<exec_kernel_update>(
    "update",
    "update($self, /, *, config=None, kernel=None, args=None)\n--\n\n"
    "New configuration, kernel and arguments for this Graph's launches (args checked as a\n"
    "launch's). With args only, the node keeps its kernel and configuration in this Graph.");

// update(config=..., kernel=..., args=...) with a config or kernel: packs against `kernel`'s
// layout and gives the node its function and launch shape too (Graph::set_kernel_node).
void exec_set_kernel(PyGraph& pg, std::uintptr_t node, const LaunchConfig& config, const Kernel& kernel,
                     nb::tuple args) {
  Graph& graph = pg.ready("Graph node update");
  std::size_t index = graph.kernel_index(reinterpret_cast<CUgraphNode>(node), kCall);
  ParamLayout layout = kernel.param_layout();
  HeapPackedArgs packed(layout, kernel.name(), args, graph.device().ordinal());
  CUDA_KERNEL_NODE_PARAMS p = graph.kernel_nodes()[index].params;
  p.func = kernel.function(*graph.device().context());
  p.kern = nullptr;
  p.gridDimX = config.grid.x;
  p.gridDimY = config.grid.y;
  p.gridDimZ = config.grid.z;
  p.blockDimX = config.block.x;
  p.blockDimY = config.block.y;
  p.blockDimZ = config.block.z;
  p.sharedMemBytes = config.shared_mem;
  p.kernelParams = packed.params();
  std::size_t count = layout.count();
  graph.set_kernel_node(index, p, std::move(layout), kernel.name());
  if (index < pg.slots.size()) pg.slots[index].assign(count + 1, {});  // the kinds of the new layout
}

// update(args=...) off the fast path (args of another iterable type, a subclass of the view).
void exec_update_args(PyGraph& pg, std::uintptr_t node, nb::tuple args) {
  Graph& graph = pg.ready("Graph node update");
  std::size_t index = graph.kernel_index(reinterpret_cast<CUgraphNode>(node), kCall);
  std::size_t n = args.size();
  update_kernel_args(pg, graph, index, n ? &PyTuple_GET_ITEM(args.ptr(), 0) : nullptr, n);
}

}  // namespace

void bind_graph_exec_node(nb::module_& m) {
  nb::module_ internal = internal_module(m);
  internal.def("install_exec_kernel_update", [](nb::handle view, nb::handle node, nb::handle definition) {
    g_view.exec = slot_offset(view, "_exec");
    g_view.node = slot_offset(view, "_node");
    g_view.index = slot_offset(view, "_index");
    g_view.stamp = slot_offset(view, "_stamp");
    g_view.graph = slot_offset(node, "_graph");
    g_view.handle = slot_offset(node, "_handle");
    g_view.valid = slot_offset(node, "_valid");
    g_view.core = slot_offset(definition, "_core");
    g_view.node_type = reinterpret_cast<PyTypeObject*>(node.ptr());
    g_view.definition_type = reinterpret_cast<PyTypeObject*>(definition.ptr());
    g_view.core_type = reinterpret_cast<PyTypeObject*>(nb::type<GraphDefinition>().ptr());
    g_view.graph_type = reinterpret_cast<PyTypeObject*>(nb::type<PyGraph>().ptr());
    g_view.slow = nb::object(view.attr("_update")).release().ptr();  // kept for the process's life
    g_view.args_name = PyUnicode_InternFromString("args");
    g_view.config_name = PyUnicode_InternFromString("config");
    g_view.kernel_name = PyUnicode_InternFromString("kernel");
    Py_INCREF(node.ptr());  // the types are read by the fast path for the process's life
    Py_INCREF(definition.ptr());
    install_method(view, &g_update_def);
  }, nb::arg("view"), nb::arg("node"), nb::arg("definition"),
  "Makes `view` (ExecutableKernelNode).update a C method reading the __slots__ of `view`, "
  "`node` (GraphNode) and `definition` (GraphDefinition).");
  internal.def("graph_nodes_destroyed", [] { ++g_node_epoch; },
               "A definition node was destroyed: graph[node] views look their node up again.");
  internal.def("graph_exec_update_args", &exec_update_args, nb::arg("graph"), nb::arg("node"), nb::arg("args"),
               "Give kernel node `node` of executable `graph` new arguments (its kernel and configuration stay).");
  internal.def("graph_exec_set_kernel", &exec_set_kernel, nb::arg("graph"), nb::arg("node"),
               nb::arg("config"), nb::arg("kernel"), nb::arg("args"),
               "Give kernel node `node` of executable `graph` a new configuration, kernel and arguments.");
}

}  // namespace nanocuda::py
