// One wrapper for every raw CPython entry point: bodies may throw, errors.cpp maps the exception.
#pragma once

#include <nanobind/nanobind.h>

#include <stdexcept>
#include <type_traits>

namespace nanocuda::py {

// Sets the Python error for the C++ exception in flight, mapped exactly as nanobind's
// translator does (errors.cpp). Only the wrappers below call it.
void set_error_from_current_exception() noexcept;

// Thrown by entry-point bodies for Python's NotImplementedError (errors.cpp maps it).
struct NotImplementedError : std::logic_error {
  using std::logic_error::logic_error;
};

namespace fastpath_detail {

template <auto Body, class Fn>
struct Guarded;

template <auto Body, class R, class... A>
struct Guarded<Body, R (*)(A...)> {
  static_assert(std::is_same_v<R, PyObject*> || std::is_same_v<R, int>,
                "raw entry points return PyObject* (nullptr on error) or int (-1 on error)");
  static R call(A... a) noexcept {
    try {
      return Body(a...);
    } catch (...) {
      set_error_from_current_exception();
      if constexpr (std::is_same_v<R, PyObject*>) return nullptr;
      else return -1;
    }
  }
};

}  // namespace fastpath_detail

// Marks a body that GCC would otherwise call from its guarded<> wrapper rather than inline
// (launch(), allocate, close: tools/launch_instructions.py counted the extra call). Not for
// every body: forcing TensorMap.tiled's in made it slower.
#define NANOCUDA_FASTCALL_BODY [[gnu::always_inline]] inline

// `Body`, a function that may throw, as an entry point of the same signature that never
// does: what CPython stores in a PyMethodDef, a vectorcall slot or a tp_* slot.
template <auto Body>
inline constexpr auto guarded = &fastpath_detail::Guarded<Body, decltype(Body)>::call;

using FastcallBody = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t);
using FastcallKeywordsBody = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*);

// A METH_FASTCALL method (with METH_KEYWORDS when `Body` takes kwnames): no argument tuple
// and none of nanobind's generic dispatch, for entry points called per launch.
template <auto Body>
PyMethodDef fastcall_method(const char* name, const char* doc) {
  if constexpr (std::is_same_v<decltype(Body), FastcallBody>) {
    return {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(guarded<Body>)),
            METH_FASTCALL, doc};
  } else {
    static_assert(std::is_same_v<decltype(Body), FastcallKeywordsBody>,
                  "a METH_FASTCALL body: (self, args, nargs[, kwnames]) -> PyObject*");
    return {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(guarded<Body>)),
            METH_FASTCALL | METH_KEYWORDS, doc};
  }
}

// Sets `def` on `type` as a method (PyDescr_NewMethod), or, static_method=true, as a
// staticmethod; replaces what nanobind bound under that name. Raises on failure.
void install_method(nanobind::handle type, PyMethodDef* def, bool static_method = false);
// Sets `def` on `type` as a classmethod (the class comes first in args).
void install_classmethod(nanobind::handle type, PyMethodDef* def);
// Sets `def` on `module` as a module-level function.
void add_function(nanobind::handle module, PyMethodDef* def);

}  // namespace nanocuda::py
