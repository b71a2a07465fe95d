// GraphDefinition.launch at C++ speed: the kernel-node add path and a METH_FASTCALL launch() on
// the Python class nanocuda.graph.GraphDefinition that makes the node view itself.
#include "launch/graph_definition_launch.h"

#include <structmember.h>  // PyMemberDef (Python 3.11 keeps it here)

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.h"
#include "fastpath/fastcall.h"
#include "launch/arg_pack.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/launch/param_packer.h"

namespace nb = nanobind;

namespace nanocuda::py {

std::shared_ptr<void> hold_py(nb::handle obj) {
  Py_INCREF(obj.ptr());
  return std::shared_ptr<void>(obj.ptr(), [](void* p) {
    if (PyGILState_Check()) {
      Py_DECREF(static_cast<PyObject*>(p));
    } else if (Py_IsInitialized()) {
      PyGILState_STATE gil = PyGILState_Ensure();
      Py_DECREF(static_cast<PyObject*>(p));
      PyGILState_Release(gil);
    }
  });
}

namespace {

// The add path's argument decisions (ArgSlot) for the kernel added last, found again through
// a weak reference to it (so never another kernel at a reused address): a thousand nodes of
// one kernel classify their arguments once, as a Launcher does. Under the GIL; not re-entered.
struct AddSlots {
  PyObject* kernel_ref = nullptr;
  std::vector<ArgSlot> slots;
  bool busy = false;  // an argument's Python code adding a node meanwhile gets fresh slots
};
AddSlots& add_slots() {
  static AddSlots* s = new AddSlots;  // never destroyed: it may outlive the interpreter
  return *s;
}


}  // namespace

std::uintptr_t add_kernel_node(GraphDefinition& g, const GraphDefinition::Deps& deps,
                               const LaunchConfig& config,
                               const Kernel& kernel, PyObject* py_kernel, nb::tuple args) {
  const ParamLayout& layout = kernel.param_layout();
  const std::size_t n = static_cast<std::size_t>(PyTuple_GET_SIZE(args.ptr()));
  AddSlots& cache = add_slots();
  std::vector<ArgSlot> own;
  ArgSlot* slots = nullptr;
  if (cache.busy) {
    own.resize(std::max(n, layout.count()) + 1);
    slots = own.data();
  } else {
    if (!cache.kernel_ref || PyWeakref_GetObject(cache.kernel_ref) != py_kernel) {
      PyObject* ref = PyWeakref_NewRef(py_kernel, nullptr);
      if (!ref) throw nb::python_error();
      Py_XDECREF(cache.kernel_ref);
      cache.kernel_ref = ref;
      cache.slots.assign(layout.count() + 1, ArgSlot{});
    }
    if (cache.slots.size() < n + 1) cache.slots.resize(n + 1);  // pack_args refuses the count
    slots = cache.slots.data();
  }
  alignas(16) unsigned char small[256];
  void* small_ptrs[17];
  std::vector<unsigned char> big;  // a kernel with more than 256 bytes or 16 parameters
  std::vector<void*> big_ptrs;
  unsigned char* storage = small;
  void** ptrs = small_ptrs;
  if (layout.total_size() > sizeof small) {
    big.resize(layout.total_size() + 16);
    storage = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(big.data()) + 15) &
                                               ~std::uintptr_t{15});
  }
  if (layout.count() + 1 > std::size(small_ptrs)) {
    big_ptrs.resize(layout.count() + 1);
    ptrs = big_ptrs.data();
  }
  ParamPacker packer(layout, kernel.name(), storage, ptrs);
  struct Busy { AddSlots& c; bool was; ~Busy() { c.busy = was; } } busy{cache, cache.busy};
  cache.busy = true;
  pack_args(packer, n ? &PyTuple_GET_ITEM(args.ptr(), 0) : nullptr, n, g.device().ordinal(), slots);
  auto node = reinterpret_cast<std::uintptr_t>(g.add_kernel(deps, config, kernel, ptrs));
  // The graph keeps the kernel (its library) alive: one hold per kernel, not per node.
  g.keep_alive_once(py_kernel, [py_kernel] { return hold_py(nb::handle(py_kernel)); });
  return node;
}

namespace {

// Where the Python classes keep what launch() reads and writes (their __slots__ offsets), found
// once at install time, and the Python launch (_launch_entry) for every call the fast path
// does not take: subclasses of LaunchConfig or Kernel, a destroyed graph, a refused add.
struct DefinitionLayout {
  Py_ssize_t core = 0, tree = 0;                // GraphDefinition: _core, _tree
  Py_ssize_t graph = 0, handle = 0, valid = 0;  // GraphNode: _graph, _handle, _valid
  Py_ssize_t extras = 0, nodes = 0;             // _Tree: extras, nodes
  PyTypeObject* definition_type = nullptr;      // nanocuda.graph.GraphDefinition
  PyTypeObject* node_type = nullptr;            // nanocuda.graph.KernelNode
  PyTypeObject* tree_type = nullptr;            // its _Tree
  PyTypeObject* core_type = nullptr;            // _internal.GraphDef
  PyTypeObject* config_type = nullptr;          // LaunchConfig
  PyTypeObject* kernel_type = nullptr;          // Kernel
  PyObject* slow = nullptr;                     // GraphDefinition._launch_entry
};
DefinitionLayout g_def;

Py_ssize_t slot_offset(nb::handle cls, const char* name) {
  nb::object d = cls.attr(name);
  if (Py_TYPE(d.ptr()) != &PyMemberDescr_Type || reinterpret_cast<PyMemberDescrObject*>(d.ptr())->d_member->type != T_OBJECT_EX)
    throw std::runtime_error(std::string("install_definition_launch: ") + name + " is not a __slots__ member");
  return reinterpret_cast<PyMemberDescrObject*>(d.ptr())->d_member->offset;
}

// A __slots__ value (borrowed; nullptr when unset). `obj` must be of the class that has it.
PyObject*& slot(PyObject* obj, Py_ssize_t offset) {
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + offset);
}

PyObject* launch_slow(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  std::vector<PyObject*> all(static_cast<std::size_t>(nargs) + 1);
  all[0] = self;
  std::copy(args, args + nargs, all.begin() + 1);
  return PyObject_Vectorcall(g_def.slow, all.data(), all.size(), nullptr);
}

// launch(config, kernel, *args) -> KernelNode: what the Python _launch_entry does (the core add,
// the node's extras, the node view registered in the tree), without its interpreter frame.
PyObject* definition_launch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 2 || Py_TYPE(self) != g_def.definition_type || Py_TYPE(args[0]) != g_def.config_type ||
      Py_TYPE(args[1]) != g_def.kernel_type)
    return launch_slow(self, args, nargs);
  // Held, not borrowed: packing may run Python code (an argument's properties) that rebinds them.
  nb::object core = nb::borrow(slot(self, g_def.core));
  nb::object tree = nb::borrow(slot(self, g_def.tree));
  if (!core.is_valid() || Py_TYPE(core.ptr()) != g_def.core_type || !tree.is_valid() ||
      Py_TYPE(tree.ptr()) != g_def.tree_type)
    return launch_slow(self, args, nargs);
  nb::object extras = nb::borrow(slot(tree.ptr(), g_def.extras));
  nb::object nodes = nb::borrow(slot(tree.ptr(), g_def.nodes));
  if (!extras.is_valid() || !PyDict_CheckExact(extras.ptr()) || !nodes.is_valid() || !PyDict_CheckExact(nodes.ptr()))
    return launch_slow(self, args, nargs);
  nb::object rest = nb::steal(PyTuple_New(nargs - 2));
  if (!rest.is_valid()) return nullptr;
  for (Py_ssize_t i = 2; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(rest.ptr(), i - 2, args[i]);
  }
  std::uintptr_t h = 0;
  try {
    h = add_kernel_node(*nb::inst_ptr<GraphDefinition>(core.ptr()), {}, *nb::inst_ptr<LaunchConfig>(args[0]),
                        *nb::inst_ptr<Kernel>(args[1]), args[1], nb::borrow<nb::tuple>(rest));
  } catch (const ValueError&) {  // a destroyed graph among them: the Python path says which
    return launch_slow(self, args, nargs);
  }
  nb::object handle = nb::steal(PyLong_FromSize_t(h));
  nb::object extra = nb::steal(PyTuple_Pack(3, args[1], rest.ptr(), args[0]));  // (kernel, args, config)
  if (!handle.is_valid() || !extra.is_valid() || PyDict_SetItem(extras.ptr(), handle.ptr(), extra.ptr()))
    return nullptr;
  nb::object node = nb::steal(g_def.node_type->tp_alloc(g_def.node_type, 0));  // object.__new__
  if (!node.is_valid()) return nullptr;
  slot(node.ptr(), g_def.graph) = nb::handle(self).inc_ref().ptr();
  slot(node.ptr(), g_def.handle) = handle.inc_ref().ptr();
  slot(node.ptr(), g_def.valid) = nb::handle(Py_True).inc_ref().ptr();
  nb::object ref = nb::steal(PyWeakref_NewRef(node.ptr(), nullptr));
  if (!ref.is_valid() || PyDict_SetItem(nodes.ptr(), handle.ptr(), ref.ptr())) return nullptr;
  return node.release().ptr();
}

PyMethodDef g_launch_def = fastcall_method<definition_launch>(
    "launch",
    "launch($self, config, kernel, /, *args)\n--\n\n"
    "Add an entry kernel node (no dependencies); see GraphNode.launch.");

}  // namespace

void bind_graph_definition_launch(nb::module_& m) {
  nb::module_ internal = internal_module(m);
  internal.def("install_definition_launch", [](nb::handle definition, nb::handle node, nb::handle tree) {
    g_def.core = slot_offset(definition, "_core");
    g_def.tree = slot_offset(definition, "_tree");
    g_def.graph = slot_offset(node, "_graph");
    g_def.handle = slot_offset(node, "_handle");
    g_def.valid = slot_offset(node, "_valid");
    g_def.extras = slot_offset(tree, "extras");
    g_def.nodes = slot_offset(tree, "nodes");
    g_def.definition_type = reinterpret_cast<PyTypeObject*>(definition.ptr());
    g_def.node_type = reinterpret_cast<PyTypeObject*>(node.ptr());
    g_def.tree_type = reinterpret_cast<PyTypeObject*>(tree.ptr());
    g_def.core_type = reinterpret_cast<PyTypeObject*>(nb::type<GraphDefinition>().ptr());
    g_def.config_type = reinterpret_cast<PyTypeObject*>(nb::type<LaunchConfig>().ptr());
    g_def.kernel_type = reinterpret_cast<PyTypeObject*>(nb::type<Kernel>().ptr());
    g_def.slow = nb::object(definition.attr("_launch_entry")).release().ptr();  // kept for the process's life
    Py_INCREF(definition.ptr());  // the types are read by the fast path for the process's life
    Py_INCREF(node.ptr());
    Py_INCREF(tree.ptr());
    install_method(definition, &g_launch_def);
  }, nb::arg("definition"), nb::arg("node"), nb::arg("tree"),
  "Installs the fast GraphDefinition.launch (the Python one stays as _launch_entry).");
}

}  // namespace nanocuda::py
