// StridedMemoryView's per-call pair in C: from_dlpack(obj, stream_ptr=-1) of a producer with a
// DLPack C exchange API (an unread view: a StridedMemoryView holding only obj), then
// as_tensor_map(box) of that view, straight to TensorMap.tiled; the views' slots, dealloc and
// free list. Every other call goes to the Python methods, unchanged.
#include <nanobind/nanobind.h>
#include <structmember.h>

#include <array>
#include <cstddef>
#include <cstdint>
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
Py_ssize_t g_pending = 0;                // offset of its `_pending` slot: the unread object, else None
PyObject* g_read_pending = nullptr;      // StridedMemoryView._read_pending: reads that object
PyObject* g_minus_one = nullptr;         // -1, CPython's cached small int
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

PyObject*& slot_at(PyObject* view, Py_ssize_t offset) {
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(view) + offset);
}

PyObject*& pending_slot(PyObject* view) { return slot_at(view, g_pending); }

// Not read yet: `_pending` holds the object (a read view's is None).
bool unread(PyObject* view) {
  PyObject* p = pending_slot(view);
  return p && p != Py_None;
}

// Views freed by view_dealloc wait here for from_dlpack: the pair makes and drops one view per
// call, and reusing it skips the allocator, the memset of 15 slots and the GC's count.
std::array<PyObject*, 4> g_free_views{};
std::size_t g_free_count = 0;

PyObject* new_view() {
  if (g_free_count == 0) return g_view->tp_alloc(g_view, 0);
  PyObject* self = g_free_views[--g_free_count];
  PyObject_Init(self, g_view);  // slots were cleared when it was freed
  PyObject_GC_Track(self);
  return self;
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
  if (cls == reinterpret_cast<PyObject*>(g_view) && stream &&
      (stream == g_minus_one || (PyLong_CheckExact(stream) &&
                                 PyLong_AsLongAndOverflow(stream, &overflow) == -1 && !overflow)) &&
      exchange_reader(Py_TYPE(args[1])) != nullptr) [[likely]] {
    // The view reads its object on first use, as the Python method's lazy path does.
    PyObject* self = new_view();
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
  PyObject* pending = Py_TYPE(self) == g_view ? pending_slot(self) : nullptr;
  if (box && PyTuple_CheckExact(box) && pending && pending != Py_None) [[likely]] {
    try {
      return tiled_cuda_core_defaults(pending, box).release().ptr();
    } catch (const std::exception&) {  // nanocuda's, nanobind's and Python's errors alike
      PyErr_Clear();  // the Python method repeats the call and words the error as cuda.core does
    }
  }
  return call_slow(g_slow_as_tensor_map, self, args, nargs, kwnames);
}

// The views' dealloc: their slots cleared as the one block of words Python laid them out in
// (checked at install), where Python's generic subtype_dealloc walks each class's members and
// its finalizer, weakref and trashcan cases (a view has none of them: no __del__, no
// __weakref__). A subclass made in Python keeps subtype_dealloc, which clears its own slots and
// then calls this; only exact views go to the free list.
std::size_t g_slot_count = 0;  // the slots: words [sizeof(PyObject), + g_slot_count) of a view

void view_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  auto** slots = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + sizeof(PyObject));
  for (std::size_t i = 0; i < g_slot_count; ++i) {
    if (PyObject* o = slots[i]) {
      slots[i] = nullptr;
      Py_DECREF(o);
    }
  }
  if (type == g_view && g_free_count < g_free_views.size()) {
    g_free_views[g_free_count++] = self;  // untracked, every slot NULL: new_view's to reuse
  } else {
    type->tp_free(self);
  }
  Py_DECREF(type);  // instances of heap types hold their type
}

// Whether view_dealloc can stand in for subtype_dealloc on `type`: object slots only (no
// __dict__, __weakref__ or __del__), at most 32, filling the words right after the header.
bool plain_slots(PyTypeObject* type) {
  if (type->tp_dictoffset || type->tp_weaklistoffset || type->tp_finalize || type->tp_del ||
      type->tp_base != &PyBaseObject_Type || !(type->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
      !(type->tp_flags & Py_TPFLAGS_HAVE_GC))
    return false;
  auto* heap = reinterpret_cast<PyHeapTypeObject*>(type);
  PyMemberDef* members = reinterpret_cast<PyMemberDef*>(
      reinterpret_cast<char*>(heap) + Py_TYPE(type)->tp_basicsize);
  const Py_ssize_t n = Py_SIZE(type);
  if (n > 32 || type->tp_basicsize != static_cast<Py_ssize_t>(sizeof(PyObject)) + n * 8) return false;
  std::uint32_t seen = 0;  // word k is some member's
  for (Py_ssize_t i = 0; i < n; ++i) {
    const Py_ssize_t k = (members[i].offset - static_cast<Py_ssize_t>(sizeof(PyObject))) / 8;
    if (members[i].type != T_OBJECT_EX || members[i].offset % 8 != 0 || k < 0 || k >= n) return false;
    seen |= std::uint32_t{1} << k;
  }
  if (seen != (n == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << n) - 1)) return false;
  g_slot_count = static_cast<std::size_t>(n);
  return true;
}

// StridedMemoryView's fields (every slot but `_pending`) as data descriptors that read an
// unread view's object on first use, so from_dlpack(obj, -1) makes a plain StridedMemoryView
// holding obj alone. A read view's field is its slot, as the member descriptor gave it.
struct LazySlot {
  PyObject_HEAD
  Py_ssize_t offset;
  PyObject* name;
  PyObject* doc;
};

[[noreturn]] void no_field(const LazySlot* d, PyObject* obj) {
  throw nb::attribute_error((std::string("'") + Py_TYPE(obj)->tp_name + "' object has no attribute '" +
                             PyUnicode_AsUTF8(d->name) + "'").c_str());
}

void check_applies(const LazySlot* d, PyObject* obj) {
  if (PyObject_TypeCheck(obj, g_view)) [[likely]] return;
  throw nb::type_error((std::string("descriptor '") + PyUnicode_AsUTF8(d->name) +
                        "' for 'StridedMemoryView' objects doesn't apply to a '" +
                        Py_TYPE(obj)->tp_name + "' object").c_str());
}

void read_now(PyObject* view) {
  PyObject* r = PyObject_CallOneArg(g_read_pending, view);
  if (!r) throw nb::python_error();
  Py_DECREF(r);
}

PyObject* lazy_get(PyObject* self, PyObject* obj, PyObject*) {
  auto* d = reinterpret_cast<LazySlot*>(self);
  if (!obj) return Py_NewRef(self);  // read on the class: the descriptor itself
  check_applies(d, obj);
  PyObject* v = slot_at(obj, d->offset);
  if (!v && unread(obj)) {
    read_now(obj);
    v = slot_at(obj, d->offset);
  }
  if (!v) no_field(d, obj);
  return Py_NewRef(v);
}

// Setting (or deleting) a field of an unread view reads it first, so the read cannot undo it.
int lazy_set(PyObject* self, PyObject* obj, PyObject* value) {
  auto* d = reinterpret_cast<LazySlot*>(self);
  check_applies(d, obj);
  if (unread(obj)) read_now(obj);
  PyObject*& slot = slot_at(obj, d->offset);
  if (!value && !slot) no_field(d, obj);
  Py_XSETREF(slot, Py_XNewRef(value));
  return 0;
}

void lazy_dealloc(PyObject* self) {
  auto* d = reinterpret_cast<LazySlot*>(self);
  Py_XDECREF(d->name);
  Py_XDECREF(d->doc);
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyMemberDef g_lazy_members[] = {
    {"__doc__", T_OBJECT, offsetof(LazySlot, doc), READONLY, nullptr},
    {"__name__", T_OBJECT, offsetof(LazySlot, name), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot g_lazy_slots[] = {
    {Py_tp_descr_get, reinterpret_cast<void*>(guarded<lazy_get>)},
    {Py_tp_descr_set, reinterpret_cast<void*>(guarded<lazy_set>)},
    {Py_tp_dealloc, reinterpret_cast<void*>(lazy_dealloc)},
    {Py_tp_members, g_lazy_members},
    {0, nullptr},
};

PyType_Spec g_lazy_spec = {"nanocuda.StridedMemoryViewField", sizeof(LazySlot), 0, Py_TPFLAGS_DEFAULT,
                           g_lazy_slots};

// Puts a LazySlot over each of `type`'s member descriptors but `_pending`.
void install_fields(PyTypeObject* type) {
  nb::object lazy_type = nb::steal(PyType_FromSpec(&g_lazy_spec));
  if (!lazy_type.is_valid()) throw nb::python_error();
  auto* heap = reinterpret_cast<PyHeapTypeObject*>(type);
  PyMemberDef* members = reinterpret_cast<PyMemberDef*>(
      reinterpret_cast<char*>(heap) + Py_TYPE(type)->tp_basicsize);
  for (Py_ssize_t i = 0; i < Py_SIZE(type); ++i) {
    const PyMemberDef& m = members[i];
    if (m.type != T_OBJECT_EX || std::string(m.name) == "_pending") continue;
    // The doc is the class's __slots__ entry (a dict of docs), as help() shows it; "" is none.
    PyObject* docs = PyDict_GetItemString(type->tp_dict, "__slots__");  // borrowed
    PyObject* doc = docs && PyDict_Check(docs) ? PyDict_GetItemString(docs, m.name) : nullptr;
    if (!doc || !PyUnicode_Check(doc) || PyUnicode_GET_LENGTH(doc) == 0) doc = Py_None;
    auto* d = PyObject_New(LazySlot, reinterpret_cast<PyTypeObject*>(lazy_type.ptr()));
    if (!d) throw nb::python_error();
    d->offset = m.offset;
    d->name = PyUnicode_FromString(m.name);
    d->doc = Py_NewRef(doc);
    nb::object field = nb::steal(reinterpret_cast<PyObject*>(d));
    if (!d->name || PyObject_SetAttrString(reinterpret_cast<PyObject*>(type), m.name, field.ptr()) != 0)
      throw nb::python_error();
  }
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
// `read_pending(view)` reads an unread view's object into its fields.
void install(nb::handle view, nb::handle read_pending, nb::handle slow_from_dlpack,
             nb::handle slow_as_tensor_map) {
  if (g_view) throw nb::type_error("StridedMemoryView's fast paths are installed once");
  if (!PyType_Check(view.ptr()) || !PyCallable_Check(read_pending.ptr()))
    throw nb::type_error("smv_install: expected the view class and its reading function");
  auto* type = reinterpret_cast<PyTypeObject*>(view.ptr());
  PyObject* slot = PyDict_GetItemString(type->tp_dict, "_pending");  // borrowed
  if (!slot || Py_TYPE(slot) != &PyMemberDescr_Type)
    throw nb::type_error("smv_install: the view class has no _pending slot");
  PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(slot)->d_member;
  if (member->type != T_OBJECT_EX) throw nb::type_error("smv_install: _pending is not an object slot");
  if (!plain_slots(type))
    throw nb::type_error("smv_install: the view class must hold object slots only (no __dict__, "
                         "__weakref__ or __del__)");
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
  g_minus_one = PyLong_FromLong(-1);
  if (!g_minus_one) throw nb::python_error();
  g_pending = member->offset;
  g_read_pending = read_pending.inc_ref().ptr();
  g_slow_from_dlpack = slow_from_dlpack.inc_ref().ptr();
  g_slow_as_tensor_map = slow_as_tensor_map.inc_ref().ptr();
  g_view = reinterpret_cast<PyTypeObject*>(view.inc_ref().ptr());
  install_fields(type);
  install_classmethod(view, &g_from_dlpack_def);
  install_method(view, &g_as_tensor_map_def);
  type->tp_dealloc = view_dealloc;
}

}  // namespace

void bind_smv_fast(nb::module_& m) {
  internal_module(m).def("smv_install", &install, nb::arg("view"), nb::arg("read_pending"),
                         nb::arg("from_dlpack"), nb::arg("as_tensor_map"),
                         "Puts StridedMemoryView.from_dlpack(obj, stream_ptr=-1) (an unread view: "
                         "read_pending(view) reads it on first use of a field) and that view's "
                         "as_tensor_map(box) in C; every other call goes to the Python methods "
                         "given. Once per process (nanocuda.utils does it).");
}

}  // namespace nanocuda::py
