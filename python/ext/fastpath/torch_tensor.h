// Reading torch tensors without importing torch: detection, data_ptr, device, dtype, geometry.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>

namespace nanocuda::py::torch {

// Whether `obj` is a torch tensor: "Tensor" in its type's name, with data_ptr() and
// get_device(). Callers cache the answer per type (TypeCache).
bool is_tensor(PyObject* obj);

// torch.Tensor's C methods as `type` holds them (method descriptors), called without an
// attribute lookup. Empty when `type` lacks them or a subclass replaced them in Python.
struct Methods {
  PyObject* data_ptr = nullptr;  // references held for the process
  PyObject* get_device = nullptr;
  explicit operator bool() const noexcept { return data_ptr != nullptr; }
};
Methods c_methods(PyTypeObject* type);

namespace detail {
inline PyObject* call(PyObject* method, PyObject* tensor) {
  PyObject* r = PyObject_Vectorcall(method, &tensor, 1, nullptr);
  if (!r) throw nanobind::python_error();
  return r;
}
}  // namespace detail

// tensor.get_device() (-1: the CPU) and tensor.data_ptr() through Methods: the launch path.
inline long device(const Methods& m, PyObject* tensor) {
  PyObject* r = detail::call(m.get_device, tensor);
  long d = PyLong_AsLong(r);
  Py_DECREF(r);
  return d;
}
inline std::uint64_t data_ptr(const Methods& m, PyObject* tensor) {
  PyObject* r = detail::call(m.data_ptr, tensor);
  std::uint64_t v = PyLong_AsUnsignedLongLong(r);
  Py_DECREF(r);
  return v;
}

// The same by name (honouring Python overrides), and the rest of the geometry; shape and
// stride() are tuples (torch.Size subclasses tuple). Raise the tensor's own error.
long device(PyObject* tensor);
std::uint64_t data_ptr(PyObject* tensor);
nanobind::object dtype(PyObject* tensor);
nanobind::tuple shape(PyObject* tensor);
nanobind::tuple stride(PyObject* tensor);

}  // namespace nanocuda::py::torch
