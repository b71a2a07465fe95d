// Decisions made once per Python type (or dtype object), then found by identity (TypeCache).
#pragma once

#include <Python.h>

#include <array>
#include <cstddef>

namespace nanocuda::py {

// A fixed number of entries, the oldest replaced when full. The GIL serializes use. Each
// key is held by a reference while cached, so its address cannot be reused by another.
template <class V, std::size_t N>
class TypeCache {
 public:
  // The value cached for `key`, or nullptr. Always inlined: a call here cost the per-call
  // lookups (TensorMap.tiled) more than the loop itself.
  [[gnu::always_inline]] V* find(const void* key) noexcept {
    for (std::size_t i = 0; i < N; ++i)
      if (keys_[i] == key) return &values_[i];
    return nullptr;
  }
  [[gnu::always_inline]] V* find(PyTypeObject* type) noexcept {
    return find(static_cast<const void*>(type));
  }

  // Caches `value` for `key`, replacing its entry if it has one.
  V& put(PyObject* key, V value) {
    if (V* v = find(key)) return *v = value;
    const std::size_t i = next_++ % N;
    Py_INCREF(key);
    Py_XDECREF(keys_[i]);
    keys_[i] = key;
    return values_[i] = value;
  }
  V& put(PyTypeObject* type, V value) { return put(reinterpret_cast<PyObject*>(type), value); }

 private:
  std::array<PyObject*, N> keys_{};
  std::array<V, N> values_{};
  std::size_t next_ = 0;
};

}  // namespace nanocuda::py
