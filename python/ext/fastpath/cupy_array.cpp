// CuPy arrays' pointer and device from their MemoryPointer: three attribute reads, where the
// __cuda_array_interface__ property builds a dict of eight entries on every access.
#include "fastpath/cupy_array.h"

#include <nanobind/nanobind.h>

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
// descriptor is what getattr does, less the lookup. Another type, or a type changed since
// (its version tag moved), takes plain getattr.
struct Getter {
  const char* name;
  PyTypeObject* type = nullptr;
  unsigned int version = 0;
  PyObject* descr = nullptr;

  PyObject* read(PyObject* obj) const {
    PyTypeObject* t = Py_TYPE(obj);
    if (t == type && t->tp_version_tag == version) [[likely]]
      return Py_TYPE(descr)->tp_descr_get(descr, obj, reinterpret_cast<PyObject*>(t));
    return PyObject_GetAttrString(obj, name);
  }
  void learn(PyTypeObject* t) {
    if (type) return;  // the first CuPy seen; others read through getattr
    nb::object key = nb::steal(PyUnicode_InternFromString(name));
    PyObject* d = key ? _PyType_Lookup(t, key.ptr()) : nullptr;  // borrowed; tags the type
    if (!d || !Py_TYPE(d)->tp_descr_get || !Py_TYPE(d)->tp_descr_set || !t->tp_version_tag) return;
    Py_INCREF(d);  // both held for the process
    Py_INCREF(t);
    descr = d;
    version = t->tp_version_tag;
    type = t;
  }
};

Getter g_data{"data"}, g_ptr{"ptr"}, g_device{"device_id"};

}  // namespace

std::uint64_t pointer(PyObject* obj, int* device) {
  PyObject* mem = g_data.read(obj);
  if (!mem) throw nb::python_error();
  PyObject* p = g_ptr.read(mem);
  PyObject* d = p ? g_device.read(mem) : nullptr;
  Py_DECREF(mem);
  if (!d) {
    Py_XDECREF(p);
    throw nb::python_error();
  }
  // CuPy keeps addresses as intptr_t: read the bits, as its interface's int would be.
  std::uint64_t ptr = PyLong_AsUnsignedLongLongMask(p);
  long dev = PyLong_AsLong(d);
  Py_DECREF(p);
  Py_DECREF(d);
  if (PyErr_Occurred()) throw nb::python_error();
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
