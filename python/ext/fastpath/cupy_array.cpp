// CuPy arrays' pointer and device from their MemoryPointer (ndarray.data): its ptr field and
// device_id, where the __cuda_array_interface__ property builds a dict of eight entries per access.
#include "fastpath/cupy_array.h"

#include <nanobind/nanobind.h>
#include <structmember.h>

#include <cstring>

namespace nb = nanobind;

namespace nanocuda::py::cupy {

namespace {

// CuPy's array base type is the Cython class cupy._core.core._ndarray_base; `cupy.ndarray`
// derives from it in Python. Compared by module and name, as Python spells them.
bool named(PyObject* type, const char* module, const char* name) {
  nb::handle t(type);
  nb::object m = nb::getattr(t, "__module__", nb::none()), n = nb::getattr(t, "__name__", nb::none());
  return PyUnicode_Check(m.ptr()) && PyUnicode_Check(n.ptr()) &&
         PyUnicode_CompareWithASCIIString(m.ptr(), module) == 0 &&
         PyUnicode_CompareWithASCIIString(n.ptr(), name) == 0;
}

bool has_cupy_base(PyTypeObject* type) {
  PyObject* mro = type->tp_mro;
  if (!mro || !PyTuple_Check(mro)) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i)
    if (named(PyTuple_GET_ITEM(mro, i), "cupy._core.core", "_ndarray_base")) return true;
  return false;
}

// One attribute read through the descriptor its type holds, found once. CuPy's attributes are
// Cython properties (data descriptors: no instance dict can shadow them), so calling the
// descriptor is what getattr does, less the lookup. When the type changes (its version tag
// moves) the descriptor is looked up again; other types take plain getattr.
struct Getter {
  const char* name;
  PyTypeObject* type = nullptr;
  unsigned int version = 0;
  PyObject* descr = nullptr;
  PyObject* key = nullptr;  // `name`, interned (held for the process)

  PyObject* read(PyObject* obj) {
    PyTypeObject* t = Py_TYPE(obj);
    if (t == type && (t->tp_version_tag == version || relearn())) [[likely]] {
      // The type is the one the descriptor was found on, so its own instance check (an MRO
      // walk for cupy.ndarray, whose properties live on its Cython base) has nothing to add.
      if (Py_TYPE(descr) == &PyGetSetDescr_Type) {
        PyGetSetDef* g = reinterpret_cast<PyGetSetDescrObject*>(descr)->d_getset;
        if (g->get) [[likely]] return g->get(obj, g->closure);
      } else if (Py_TYPE(descr) == &PyMemberDescr_Type) {
        return PyMember_GetOne(reinterpret_cast<const char*>(obj),
                               reinterpret_cast<PyMemberDescrObject*>(descr)->d_member);
      }
      return Py_TYPE(descr)->tp_descr_get(descr, obj, reinterpret_cast<PyObject*>(t));
    }
    return key ? PyObject_GetAttr(obj, key) : PyObject_GetAttrString(obj, name);
  }
  // The descriptor `type` holds now, when it is still a data descriptor.
  bool relearn() {
    PyObject* d = _PyType_Lookup(type, key);  // borrowed; tags the type
    if (!d || !Py_TYPE(d)->tp_descr_get || !Py_TYPE(d)->tp_descr_set || !type->tp_version_tag)
      return false;
    Py_INCREF(d);
    Py_DECREF(descr);
    descr = d;
    version = type->tp_version_tag;
    return true;
  }
  void learn(PyTypeObject* t) {
    if (type) return;  // the first CuPy seen; others read through getattr
    if (!key && !(key = PyUnicode_InternFromString(name))) return PyErr_Clear();
    PyObject* d = _PyType_Lookup(t, key);  // borrowed; tags the type
    if (!d || !Py_TYPE(d)->tp_descr_get || !Py_TYPE(d)->tp_descr_set || !t->tp_version_tag) return;
    Py_INCREF(d);  // both held for the process
    Py_INCREF(t);
    descr = d;
    version = t->tp_version_tag;
    type = t;
  }
};

Getter g_data{"data"}, g_ptr{"ptr"}, g_device{"device_id"};

// MemoryPointer.ptr is a C field of a Cython object (`cdef readonly intptr_t ptr`), which its
// getter turns into a new int on every read; ndarray.data (`cdef readonly MemoryPointer data`)
// is an object field its getter returns with a new reference. Once a field's place in the
// object is known and its word has matched the getter's answer for kConfirm different values,
// the word is read directly; any disagreement before that leaves the getter in charge for good.
struct FieldWord {
  static constexpr int kConfirm = 4;
  static constexpr int kSearches = 8;  // objects scanned for the field before giving up
  const Getter* getter;                // whose type the field belongs to (it holds the reference)
  PyTypeObject* type = nullptr;
  unsigned int version = 0;            // its version tag then: a changed type is read anew
  Py_ssize_t offset = 0;
  std::uint64_t last = 0;
  int to_confirm = kConfirm, searches = 0;
  bool off = false;

  static std::uint64_t word(PyObject* o, Py_ssize_t at) {
    std::uint64_t w;
    std::memcpy(&w, reinterpret_cast<const char*>(o) + at, sizeof w);
    return w;
  }
  bool trusted(PyTypeObject* t) const {
    return t == type && to_confirm == 0 && t->tp_version_tag == version;
  }
  // The getter read `value` from `obj`: learn or confirm where the field is.
  void observe(PyObject* obj, std::uint64_t value) {
    PyTypeObject* t = Py_TYPE(obj);
    if (off || t != getter->type || value < 0x10000) return;  // small values identify nothing
    if (!type) {
      if (++searches > kSearches) off = true;
      Py_ssize_t found = 0, matches = 0;
      for (Py_ssize_t at = sizeof(PyObject); at + 8 <= t->tp_basicsize; at += 8)
        if (word(obj, at) == value) found = at, ++matches;
      if (matches == 1) type = t, version = t->tp_version_tag, offset = found, last = value;
      return;
    }
    if (word(obj, offset) != value || t->tp_version_tag != version) off = true;
    else if (value != last) last = value, --to_confirm;
  }
};

FieldWord g_ptr_word{&g_ptr}, g_data_word{&g_data};

// ndarray.data, a new reference (nullptr with the error set).
PyObject* memory_pointer(PyObject* obj) {
  if (g_data_word.trusted(Py_TYPE(obj))) [[likely]] {
    auto* mem = reinterpret_cast<PyObject*>(FieldWord::word(obj, g_data_word.offset));
    if (mem && Py_TYPE(mem) == g_ptr.type) [[likely]] return Py_NewRef(mem);  // else: the getter's answer
  }
  PyObject* mem = g_data.read(obj);
  if (mem) g_data_word.observe(obj, reinterpret_cast<std::uintptr_t>(mem));
  return mem;
}

}  // namespace

std::uint64_t pointer(PyObject* obj, int* device) {
  PyObject* mem = memory_pointer(obj);
  if (!mem) throw nb::python_error();
  std::uint64_t ptr = 0;
  if (g_ptr_word.trusted(Py_TYPE(mem))) [[likely]] {
    ptr = FieldWord::word(mem, g_ptr_word.offset);
  } else {
    PyObject* p = g_ptr.read(mem);
    if (!p) {
      Py_DECREF(mem);
      throw nb::python_error();
    }
    // CuPy keeps addresses as intptr_t: read the bits, as its interface's int would be.
    ptr = PyLong_AsUnsignedLongLongMask(p);
    Py_DECREF(p);
    if (ptr == static_cast<std::uint64_t>(-1) && PyErr_Occurred()) {
      Py_DECREF(mem);
      throw nb::python_error();
    }
    g_ptr_word.observe(mem, ptr);
  }
  PyObject* d = g_device.read(mem);
  Py_DECREF(mem);
  if (!d) throw nb::python_error();
  long dev = PyLong_AsLong(d);
  Py_DECREF(d);
  if (dev == -1 && PyErr_Occurred()) throw nb::python_error();
  *device = static_cast<int>(dev);
  return ptr;
}

bool is_array(PyObject* obj, std::uint64_t interface_ptr) {
  if (!has_cupy_base(Py_TYPE(obj))) return false;
  try {
    int device = -1;
    if (pointer(obj, &device) != interface_ptr || device < 0) return false;
    nb::object mem = nb::steal(PyObject_GetAttrString(obj, "data"));
    if (!mem) throw nb::python_error();
    g_data.learn(Py_TYPE(obj));
    g_ptr.learn(Py_TYPE(mem.ptr()));
    g_device.learn(Py_TYPE(mem.ptr()));
    return true;
  } catch (const nb::python_error&) {
    return false;  // not the CuPy we know: the interface path reads it
  }
}

}  // namespace nanocuda::py::cupy
