// The argument objects of the last TensorMap.tiled/tiled_from_pointer call and what they
// parsed to, so a loop passing the same shape/box/option objects every call skips parsing.
//
// A key is kept only when every object in it is immutable all the way down (None, an exact
// int or str, an exact tuple of exact ints; the dtype slot may also be a dtype object, which
// the dtype cache already treats as a singleton). The memo holds references, so an object's
// identity cannot be reused by another while it is a key: same identities, same values.
// Used under the GIL.
#pragma once

#include <Python.h>

#include <array>
#include <cstddef>

namespace nanocuda::py {

template <std::size_t N, class Parsed>
class ArgsMemo {
 public:
  using Key = std::array<PyObject*, N>;

  // The parsed value for `key` (nullptr entries: arguments not given), or nullptr. Callers
  // may keep notes of their own in it (it stays until another key is stored).
  [[nodiscard]] Parsed* find(const Key& key) noexcept {
    return valid_ && key == key_ ? &parsed_ : nullptr;
  }

  // Remembers `parsed` for `key` when the key qualifies; `dtype_slot` (or N) is exempt from
  // the deep-immutability test.
  void store(const Key& key, const Parsed& parsed, std::size_t dtype_slot = N) noexcept {
    for (std::size_t i = 0; i < N; ++i)
      if (i != dtype_slot && !immutable(key[i])) return;
    for (PyObject* o : key) Py_XINCREF(o);
    for (PyObject* o : key_) Py_XDECREF(o);
    key_ = key;
    parsed_ = parsed;
    valid_ = true;
  }

 private:
  static bool immutable(PyObject* o) noexcept {
    if (!o || o == Py_None || PyLong_CheckExact(o) || PyUnicode_CheckExact(o)) return true;
    if (!PyTuple_CheckExact(o)) return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); ++i)
      if (!PyLong_CheckExact(PyTuple_GET_ITEM(o, i))) return false;
    return true;
  }

  Key key_{};
  Parsed parsed_{};
  bool valid_ = false;
};

}  // namespace nanocuda::py
