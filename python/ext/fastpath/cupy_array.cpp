// CuPy arrays' pointer and device from their MemoryPointer: three attribute reads, where the
// __cuda_array_interface__ property builds a dict of eight entries on every access.
#include "fastpath/cupy_array.h"

#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace nanocuda::py::cupy {

namespace {

PyObject* interned(const char* s) {
  return PyUnicode_InternFromString(s);  // held for the process
}

PyObject* s_data() { static PyObject* s = interned("data"); return s; }
PyObject* s_ptr() { static PyObject* s = interned("ptr"); return s; }
PyObject* s_device_id() { static PyObject* s = interned("device_id"); return s; }

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

}  // namespace

std::uint64_t pointer(PyObject* obj, int* device) {
  PyObject* mem = PyObject_GetAttr(obj, s_data());
  if (!mem) throw nb::python_error();
  PyObject* p = PyObject_GetAttr(mem, s_ptr());
  PyObject* d = p ? PyObject_GetAttr(mem, s_device_id()) : nullptr;
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
    return pointer(obj, &device) == interface_ptr && device >= 0;
  } catch (const nb::python_error&) {
    return false;  // not the CuPy we know: the interface path reads it
  }
}

}  // namespace nanocuda::py::cupy
