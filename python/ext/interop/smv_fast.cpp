// StridedMemoryView's per-call pair in C: from_dlpack(obj, stream_ptr=-1) of a producer with a
// DLPack C exchange API (an unread view: a _PendingView holding obj), then as_tensor_map(box) of
// that view, straight to TensorMap.tiled. Every other call goes to the Python methods, unchanged.
#include <nanobind/nanobind.h>
#include <structmember.h>

#include <array>
#include <exception>
#include <string>

#include "bindings.h"
#include "fastpath/fastcall.h"
#include "interop/dlpack_exchange.h"
#include "tma/tensor_map_create.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

PyTypeObject* g_view = nullptr;          // nanocuda.utils.StridedMemoryView, held for the process
PyTypeObject* g_unread = nullptr;        // its _PendingView subclass (same layout), held too
Py_ssize_t g_pending = 0;                // offset of its `_pending` slot
PyObject* g_slow_from_dlpack = nullptr;  // the Python methods: every other call, and all errors
PyObject* g_slow_as_tensor_map = nullptr;
PyObject* g_box_dim = nullptr;           // "box_dim", interned
PyObject* g_stream_ptr = nullptr;        // "stream_ptr", interned
std::string g_from_dlpack_doc, g_as_tensor_map_doc;

// `slow(first, *args, **kw)` from a vectorcall's arguments (first: cls or self).
PyObject* call_slow(PyObject* slow, PyObject* first, PyObject* const* args, Py_ssize_t nargs,
                    PyObject* kwnames) {
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  std::array<PyObject*, 16> all;
  if (nargs + nkw + 1 > static_cast<Py_ssize_t>(all.size())) {  // more than either method takes
    nb::object bound = nb::steal(PyMethod_New(slow, first));
    return bound ? PyObject_Vectorcall(bound.ptr(), args, static_cast<size_t>(nargs), kwnames) : nullptr;
  }
  all[0] = first;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) all[static_cast<std::size_t>(i) + 1] = args[i];
  return PyObject_Vectorcall(slow, all.data(), static_cast<size_t>(nargs + 1), kwnames);
}

bool is_name(PyObject* kw, PyObject* interned) {
  return kw == interned || PyUnicode_Compare(kw, interned) == 0;
}

PyObject*& pending_slot(PyObject* view) {
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(view) + g_pending);
}

// classmethod: args[0] is the class.
PyObject* from_dlpack(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs < 1) return PyObject_Vectorcall(g_slow_from_dlpack, args, 0, kwnames);
  PyObject* cls = args[0];
  PyObject* stream = nargs == 3 && nkw == 0                                       ? args[2]
                     : nargs == 2 && nkw == 1 && is_name(PyTuple_GET_ITEM(kwnames, 0), g_stream_ptr) ? args[2]
                                                                                  : nullptr;
  int overflow = 0;
  if (cls == reinterpret_cast<PyObject*>(g_view) && stream && PyLong_CheckExact(stream) &&
      PyLong_AsLongAndOverflow(stream, &overflow) == -1 && !overflow &&
      exchange_reader(Py_TYPE(args[1])) != nullptr) [[likely]] {
    // The view reads its object on first use, as the Python method's lazy path does.
    PyObject* self = g_unread->tp_alloc(g_unread, 0);
    if (!self) return nullptr;
    pending_slot(self) = Py_NewRef(args[1]);
    return self;
  }
  return call_slow(g_slow_from_dlpack, cls, args + 1, nargs - 1, kwnames);
}

// Method: as_tensor_map(box) / as_tensor_map(box_dim=box) on a view not yet read.
PyObject* as_tensor_map(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject* box = nargs == 1 && nkw == 0                                          ? args[0]
                  : nargs == 0 && nkw == 1 && is_name(PyTuple_GET_ITEM(kwnames, 0), g_box_dim) ? args[0]
                                                                                  : nullptr;
  PyObject* pending = Py_TYPE(self) == g_unread ? pending_slot(self) : nullptr;
  if (box && PyTuple_CheckExact(box) && pending) [[likely]] {
    try {
      return tiled_cuda_core_defaults(pending, box).release().ptr();
    } catch (const std::exception&) {  // nanocuda's, nanobind's and Python's errors alike
      PyErr_Clear();  // the Python method repeats the call and words the error as cuda.core does
    }
  }
  return call_slow(g_slow_as_tensor_map, self, args, nargs, kwnames);
}

// The views' dealloc: their slots cleared straight from the member table read at install,
// where Python's generic subtype_dealloc walks each class's members and its finalizer,
// weakref and trashcan cases (a view has none of them: no __del__, no __weakref__). Both
// classes get it, so `__class__` may still move a view between them; a subclass made in
// Python keeps subtype_dealloc, which clears its own slots and then calls this.
std::array<Py_ssize_t, 32> g_slot_offsets{};
std::size_t g_slot_count = 0;

void view_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  for (std::size_t i = 0; i < g_slot_count; ++i) {
    auto** slot = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + g_slot_offsets[i]);
    Py_CLEAR(*slot);
  }
  type->tp_free(self);
  Py_DECREF(type);  // instances of heap types hold their type
}

// Whether view_dealloc can stand in for subtype_dealloc on `type`: object slots only (no
// __dict__, __weakref__ or __del__), at most g_slot_offsets' size.
bool plain_slots(PyTypeObject* type) {
  if (type->tp_dictoffset || type->tp_weaklistoffset || type->tp_finalize || type->tp_del ||
      type->tp_base != &PyBaseObject_Type || !(type->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
      !(type->tp_flags & Py_TPFLAGS_HAVE_GC))
    return false;
  auto* heap = reinterpret_cast<PyHeapTypeObject*>(type);
  PyMemberDef* members = reinterpret_cast<PyMemberDef*>(
      reinterpret_cast<char*>(heap) + Py_TYPE(type)->tp_basicsize);
  std::size_t n = 0;
  for (Py_ssize_t i = 0; i < Py_SIZE(type); ++i) {
    if (members[i].type != T_OBJECT_EX || n == g_slot_offsets.size()) return false;
    g_slot_offsets[n++] = members[i].offset;
  }
  g_slot_count = n;
  return true;
}

PyMethodDef g_from_dlpack_def =
    fastcall_method<from_dlpack>("from_dlpack", nullptr);
PyMethodDef g_as_tensor_map_def =
    fastcall_method<as_tensor_map>("as_tensor_map", nullptr);

PyObject* interned(const char* s) {
  PyObject* o = PyUnicode_InternFromString(s);
  if (!o) throw nb::python_error();
  return o;
}

// Installs both on `view` (StridedMemoryView), keeping its Python methods for every other call;
// `unread` is the subclass from_dlpack's views start as.
void install(nb::handle view, nb::handle unread, nb::handle slow_from_dlpack,
             nb::handle slow_as_tensor_map) {
  if (g_view) throw nb::type_error("StridedMemoryView's fast paths are installed once");
  if (!PyType_Check(view.ptr()) || !PyType_Check(unread.ptr()))
    throw nb::type_error("smv_install: expected the view class and its unread subclass");
  auto* type = reinterpret_cast<PyTypeObject*>(view.ptr());
  auto* sub = reinterpret_cast<PyTypeObject*>(unread.ptr());
  if (sub->tp_base != type || sub->tp_basicsize != type->tp_basicsize)
    throw nb::type_error("smv_install: the unread class must subclass the view class, adding no slots");
  PyObject* slot = PyDict_GetItemString(type->tp_dict, "_pending");  // borrowed
  if (!slot || Py_TYPE(slot) != &PyMemberDescr_Type)
    throw nb::type_error("smv_install: the view class has no _pending slot");
  PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(slot)->d_member;
  if (member->type != T_OBJECT_EX) throw nb::type_error("smv_install: _pending is not an object slot");
  // Docstrings and signatures as the Python methods give them (help(), inspect).
  g_from_dlpack_doc = "from_dlpack($cls, obj, stream_ptr=None)\n--\n\n" +
                      nb::cast<std::string>(slow_from_dlpack.attr("__doc__"));
  g_as_tensor_map_doc = "as_tensor_map($self, box_dim=None, *, options=None, element_strides=None, "
                        "data_type=None, interleave=None, swizzle=None, l2_promotion=None, "
                        "oob_fill=None)\n--\n\n" +
                        nb::cast<std::string>(slow_as_tensor_map.attr("__doc__"));
  g_from_dlpack_def.ml_doc = g_from_dlpack_doc.c_str();
  g_as_tensor_map_def.ml_doc = g_as_tensor_map_doc.c_str();
  g_box_dim = interned("box_dim");
  g_stream_ptr = interned("stream_ptr");
  g_pending = member->offset;
  g_slow_from_dlpack = slow_from_dlpack.inc_ref().ptr();
  g_slow_as_tensor_map = slow_as_tensor_map.inc_ref().ptr();
  install_classmethod(view, &g_from_dlpack_def);
  install_method(view, &g_as_tensor_map_def);
  g_view = reinterpret_cast<PyTypeObject*>(view.inc_ref().ptr());
  g_unread = reinterpret_cast<PyTypeObject*>(unread.inc_ref().ptr());
  if (sub->tp_dealloc == type->tp_dealloc && Py_SIZE(sub) == 0 && plain_slots(type)) {
    type->tp_dealloc = view_dealloc;
    sub->tp_dealloc = view_dealloc;
  }
}

}  // namespace

void bind_smv_fast(nb::module_& m) {
  internal_module(m).def("smv_install", &install, nb::arg("view"), nb::arg("unread"),
                         nb::arg("from_dlpack"), nb::arg("as_tensor_map"),
                         "Puts StridedMemoryView.from_dlpack(obj, stream_ptr=-1) (a view of class "
                         "`unread`) and that view's as_tensor_map(box) in C; every other call goes "
                         "to the Python methods given. Once per process (nanocuda.utils does it).");
}

}  // namespace nanocuda::py
