// Byte counts and ordinals from Python ints, with the call's name in every error.
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace nanocuda::py {

// A size in bytes: TypeError for non-ints, ValueError for negatives and sizes past 2**64,
// so Buffer(-1) says what is wrong instead of nanobind's "incompatible arguments".
inline std::size_t size_arg(nanobind::handle obj, const char* call, const char* what = "size") {
  if (PyBool_Check(obj.ptr()) || !PyIndex_Check(obj.ptr()))
    throw nanobind::type_error((std::string(call) + ": " + what + " must be an int (bytes), got " +
                                Py_TYPE(obj.ptr())->tp_name).c_str());
  nanobind::object i = nanobind::steal(PyNumber_Index(obj.ptr()));
  if (!i.is_valid()) throw nanobind::python_error();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow < 0 || (overflow == 0 && v < 0))
    throw nanobind::value_error((std::string(call) + ": " + what + " must be >= 0, got " +
                                 nanobind::str(i).c_str()).c_str());
  if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
    if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();
      throw nanobind::value_error((std::string(call) + ": " + what + " " + nanobind::str(i).c_str() +
                                   " does not fit in 64 bits").c_str());
    }
    return static_cast<std::size_t>(u);
  }
  return static_cast<std::size_t>(v);
}

// A raw CUDA handle (a device pointer, CUstream, CUevent...): an int, or an object that
// converts with int() as cuda.bindings' handle types do (CUdeviceptr, CUstream...: cuda.core
// reads them with int()). Their getPtr() is the address of the stored handle, not the handle,
// so it is never used here. bool and float are refused (TypeError naming the call).
inline std::uint64_t handle_arg(nanobind::handle obj, const char* call, const char* what) {
  PyObject* o = obj.ptr();
  if (!PyBool_Check(o) && !PyFloat_Check(o) && !PyIndex_Check(o) && Py_TYPE(o)->tp_as_number &&
      Py_TYPE(o)->tp_as_number->nb_int) {
    nanobind::object i = nanobind::steal(PyNumber_Long(o));
    if (!i.is_valid()) throw nanobind::python_error();
    return size_arg(i, call, what);
  }
  if (PyBool_Check(o) || !PyIndex_Check(o))
    throw nanobind::type_error((std::string(call) + ": " + what + " must be an int or a handle object that "
                                "int() converts (e.g. cuda.bindings' CUdeviceptr/CUstream), got " +
                                Py_TYPE(o)->tp_name).c_str());
  return size_arg(obj, call, what);
}

// A bounded int (a priority, a count, a flag value): TypeError for non-ints (bool included),
// ValueError outside [lo, hi]; both name the call and the parameter.
inline long long int_arg(nanobind::handle obj, const char* call, const char* what, long long lo, long long hi) {
  if (PyBool_Check(obj.ptr()) || !PyIndex_Check(obj.ptr()))
    throw nanobind::type_error((std::string(call) + ": " + what + " must be an int, got " +
                                Py_TYPE(obj.ptr())->tp_name).c_str());
  nanobind::object i = nanobind::steal(PyNumber_Index(obj.ptr()));
  if (!i.is_valid()) throw nanobind::python_error();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0 || v < lo || v > hi)
    throw nanobind::value_error((std::string(call) + ": " + what + " must be in [" + std::to_string(lo) + ", " +
                                 std::to_string(hi) + "], got " + nanobind::str(i).c_str()).c_str());
  return v;
}

// A flag: exactly True or False (1, "yes" or None are TypeErrors naming the call and flag).
inline bool bool_arg(nanobind::handle obj, const char* call, const char* what) {
  if (!PyBool_Check(obj.ptr()))
    throw nanobind::type_error((std::string(call) + ": " + what + " must be a bool, got " +
                                Py_TYPE(obj.ptr())->tp_name).c_str());
  return obj.ptr() == Py_True;
}

// An options object of the bound class T: None gives T's defaults; anything else (a dict
// included) is a TypeError naming the class to use.
template <class T>
T options_arg(nanobind::handle obj, const char* call, const char* cls) {
  if (obj.is_none()) return T{};
  if (!nanobind::isinstance<T>(obj))
    throw nanobind::type_error((std::string(call) + ": options must be a nanocuda." + cls + " or None, got " +
                                Py_TYPE(obj.ptr())->tp_name +
                                (PyDict_Check(obj.ptr()) ? std::string("; write nanocuda.") + cls + "(**options)" : "")).c_str());
  return nanobind::cast<T>(obj);
}

}  // namespace nanocuda::py
