// LaunchConfig's argument readers: grid/block/cluster dimensions, shared memory bytes and
// flags, each a TypeError/ValueError naming the argument and the rule for bad input.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <initializer_list>
#include <string>

#include "nanocuda/launch/launch_config.h"

namespace nanocuda::py {

// One dimension of grid/block/cluster: an int in [1, 2**31) (the driver's largest limit);
// anything else is a TypeError/ValueError naming the argument and the rule.
inline std::uint32_t dim_of(nanobind::handle v, const char* what) {
  if (PyLong_CheckExact(v.ptr())) {  // the common case: no __index__ call
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow == 0 && x >= 1 && x <= 0x7FFFFFFFLL) [[likely]]
      return static_cast<std::uint32_t>(x);
  }
  if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr()))
    throw nanobind::type_error((std::string("LaunchConfig: ") + what + " must be an int or a tuple of 1-3 "
                          "ints, got a " + Py_TYPE(v.ptr())->tp_name).c_str());
  nanobind::object i = nanobind::steal(PyNumber_Index(v.ptr()));
  if (!i.is_valid()) throw nanobind::python_error();
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0 || x < 1 || x > 0x7FFFFFFFLL)
    throw nanobind::value_error((std::string("LaunchConfig: ") + what + " dimensions must be between 1 and "
                           "2**31 - 1, got " + nanobind::str(i).c_str()).c_str());
  return static_cast<std::uint32_t>(x);
}

inline Dim3 to_dim3(nanobind::handle obj, const char* what) {
  if (PyLong_Check(obj.ptr()) || PyIndex_Check(obj.ptr())) return {dim_of(obj, what), 1, 1};
  if (PyTuple_Check(obj.ptr())) {  // read in place: no tuple copy
    Py_ssize_t n = PyTuple_GET_SIZE(obj.ptr());
    if (n >= 1 && n <= 3) {
      Dim3 d;
      d.x = dim_of(PyTuple_GET_ITEM(obj.ptr(), 0), what);
      if (n > 1) d.y = dim_of(PyTuple_GET_ITEM(obj.ptr(), 1), what);
      if (n > 2) d.z = dim_of(PyTuple_GET_ITEM(obj.ptr(), 2), what);
      return d;
    }
  }
  if (!PyTuple_Check(obj.ptr()) && !PyList_Check(obj.ptr()))
    throw nanobind::type_error((std::string("LaunchConfig: ") + what + " must be an int or a tuple of 1-3 "
                          "ints, got a " + Py_TYPE(obj.ptr())->tp_name).c_str());
  nanobind::tuple t = nanobind::tuple(nanobind::borrow(obj));
  if (t.size() < 1 || t.size() > 3)
    throw nanobind::value_error((std::string("LaunchConfig: ") + what + " must be an int or a tuple of 1-3 "
                           "ints, got " + std::to_string(t.size()) + " values").c_str());
  Dim3 d;
  d.x = dim_of(t[0], what);
  if (t.size() > 1) d.y = dim_of(t[1], what);
  if (t.size() > 2) d.z = dim_of(t[2], what);
  return d;
}

// Bytes of dynamic shared memory: an int in [0, 2**32); None is 0 (cuda.core's default).
inline std::uint32_t shared_mem_of(nanobind::handle v, const char* what) {
  if (v.is_none()) return 0;
  if (PyLong_CheckExact(v.ptr())) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow == 0 && x >= 0 && x <= 0xFFFFFFFFLL) [[likely]]
      return static_cast<std::uint32_t>(x);
  }
  if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr()))
    throw nanobind::type_error((std::string("LaunchConfig: ") + what + " must be an int (bytes), got a " +
                          Py_TYPE(v.ptr())->tp_name).c_str());
  nanobind::object i = nanobind::steal(PyNumber_Index(v.ptr()));
  if (!i.is_valid()) throw nanobind::python_error();
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0 || x < 0 || x > 0xFFFFFFFFLL)
    throw nanobind::value_error((std::string("LaunchConfig: ") + what + " must be between 0 and 2**32 - 1 "
                           "bytes, got " + nanobind::str(i).c_str()).c_str());
  return static_cast<std::uint32_t>(x);
}

inline bool flag_of(nanobind::handle v, const char* what) {
  if (v.is_none()) return false;
  if (!PyBool_Check(v.ptr()) && !PyLong_Check(v.ptr()))
    throw nanobind::type_error((std::string("LaunchConfig: ") + what + " must be a bool, got a " +
                          Py_TYPE(v.ptr())->tp_name).c_str());
  return PyObject_IsTrue(v.ptr()) == 1;
}

// One option under several names (nanocuda's and cuda.core's): the one given, or the first
// name with None when none is. Two given is a TypeError naming both.
struct NamedArg {
  const char* name;
  nanobind::handle value;
};
inline NamedArg one_named(std::initializer_list<NamedArg> names) {
  NamedArg found{names.begin()->name, nanobind::none()};
  for (const NamedArg& a : names) {
    if (a.value.is_none()) continue;
    if (!found.value.is_none())
      throw nanobind::type_error((std::string("LaunchConfig: give ") + found.name + " or " + a.name +
                                  " (two names of one option), not both").c_str());
    found = a;
  }
  return found;
}

}  // namespace nanocuda::py
