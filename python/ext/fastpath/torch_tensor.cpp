// Reading torch tensors without importing torch: interned method names, one vectorcall each.
#include "fastpath/torch_tensor.h"

#include <cstring>
#include <string>

namespace nb = nanobind;

namespace nanocuda::py::torch {

namespace {

PyObject* interned(const char* name) { return PyUnicode_InternFromString(name); }

nb::object call_method(PyObject* tensor, PyObject* name) {
  PyObject* r = PyObject_VectorcallMethod(name, &tensor, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  if (!r) throw nb::python_error();
  return nb::steal(r);
}

nb::object get_attr(PyObject* tensor, PyObject* name) {
  PyObject* r = PyObject_GetAttr(tensor, name);
  if (!r) throw nb::python_error();
  return nb::steal(r);
}

nb::tuple as_tuple(nb::object o, const char* what) {
  if (!PyTuple_Check(o.ptr()))
    throw nb::type_error((std::string("the torch tensor's ") + what + " is not a tuple").c_str());
  return nb::borrow<nb::tuple>(o);
}

bool is_method_descriptor(PyObject* o) {
  return o && std::strcmp(Py_TYPE(o)->tp_name, "method_descriptor") == 0;
}

}  // namespace

bool is_tensor(PyObject* obj) {
  return std::strstr(Py_TYPE(obj)->tp_name, "Tensor") && PyObject_HasAttrString(obj, "data_ptr") &&
         PyObject_HasAttrString(obj, "get_device");
}

Methods c_methods(PyTypeObject* type) {
  auto* t = reinterpret_cast<PyObject*>(type);
  PyObject* dp = PyObject_GetAttrString(t, "data_ptr");
  PyObject* gd = dp ? PyObject_GetAttrString(t, "get_device") : nullptr;
  PyErr_Clear();
  if (is_method_descriptor(dp) && is_method_descriptor(gd)) {
    Py_INCREF(t);  // the descriptors belong to the type: keep it for the process as well
    return {dp, gd};
  }
  Py_XDECREF(dp);
  Py_XDECREF(gd);
  return {};
}

long device(PyObject* tensor) {
  static PyObject* name = interned("get_device");
  return PyLong_AsLong(call_method(tensor, name).ptr());
}

std::uint64_t data_ptr(PyObject* tensor) {
  static PyObject* name = interned("data_ptr");
  return PyLong_AsUnsignedLongLong(call_method(tensor, name).ptr());
}

nb::object dtype(PyObject* tensor) {
  static PyObject* name = interned("dtype");
  return get_attr(tensor, name);
}

nb::tuple shape(PyObject* tensor) {
  static PyObject* name = interned("shape");
  return as_tuple(get_attr(tensor, name), "shape");
}

nb::tuple stride(PyObject* tensor) {
  static PyObject* name = interned("stride");
  return as_tuple(call_method(tensor, name), "stride()");
}

}  // namespace nanocuda::py::torch
