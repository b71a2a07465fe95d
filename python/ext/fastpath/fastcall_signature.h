// Matching METH_FASTCALL arguments to parameter names, for entry points called per launch
// (TensorMap.tiled*): cheaper than nanobind's generic keyword dispatch.
#pragma once

#include <Python.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "nanocuda/driver/error.h"

namespace nanocuda::py {

template <std::size_t N>
class FastcallSignature {
 public:
  // The first `positional` parameters may come by position, any by keyword.
  FastcallSignature(const char* where, const std::array<const char*, N>& names,
                    std::size_t positional)
      : where_(where), names_(names), positional_(positional) {}

  // Fills `out` (nullptr: not given). Raises TypeError naming the call, as Python would.
  [[gnu::always_inline]] void match(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
             std::array<PyObject*, N>& out) {
    out.fill(nullptr);
    if (static_cast<std::size_t>(nargs) > positional_) [[unlikely]] too_many(nargs);
    for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = args[i];
    if (!kwnames) return;
    // A call site passes the same constant kwnames tuple every time: its name-to-parameter
    // mapping is worked out once and kept (with a reference, so the identity stays unique).
    if (kwnames != cached_kwnames_) [[unlikely]] resolve(kwnames);
    const Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nk; ++k) {
      const std::uint8_t j = cached_slots_[k];
      if (out[j]) [[unlikely]] twice(j);
      out[j] = args[nargs + k];
    }
  }

  [[noreturn]] void missing(std::size_t i) const {
    throw TypeError(std::string(where_) + "() missing required argument '" + names_[i] + "'");
  }

 private:
  // The errors stay out of line, so match() inlines into the per-call paths (allocate, close).
  [[noreturn, gnu::noinline, gnu::cold]] void too_many(Py_ssize_t nargs) const {
    throw TypeError(std::string(where_) + "() takes at most " + std::to_string(positional_) +
                    " positional arguments, got " + std::to_string(nargs));
  }
  [[noreturn, gnu::noinline, gnu::cold]] void twice(std::size_t j) const {
    throw TypeError(std::string(where_) + "() got multiple values for argument '" + names_[j] + "'");
  }
  [[gnu::noinline]] void resolve(PyObject* kwnames) {
    const Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    if (nk > static_cast<Py_ssize_t>(N))
      throw TypeError(std::string(where_) + "() takes at most " + std::to_string(N) +
                      " arguments, got " + std::to_string(nk) + " keyword arguments");
    std::array<std::uint8_t, N> slots{};
    for (Py_ssize_t k = 0; k < nk; ++k) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      std::size_t j = 0;
      while (j < N && PyUnicode_CompareWithASCIIString(key, names_[j]) != 0) ++j;
      if (j == N)
        throw TypeError(std::string(where_) + "() got an unexpected keyword argument '" +
                        PyUnicode_AsUTF8(key) + "'");
      slots[k] = static_cast<std::uint8_t>(j);
    }
    Py_INCREF(kwnames);
    Py_XDECREF(cached_kwnames_);
    cached_kwnames_ = kwnames;
    cached_slots_ = slots;
  }

  const char* where_;
  std::array<const char*, N> names_;
  std::size_t positional_;
  PyObject* cached_kwnames_ = nullptr;
  std::array<std::uint8_t, N> cached_slots_{};
};

}  // namespace nanocuda::py
