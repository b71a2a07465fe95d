// The Python TensorMap object: the 128 descriptor bytes plus the geometry they were built
// from, in a plain CPython object (no nanobind instance registry: creating one per launch
// is on the seed-000 hot path).
#pragma once

#include <Python.h>

#include <cstring>

#include "nanocuda/tma/tensor_map.h"

namespace nanocuda::py {

struct PyTensorMap {
  PyObject_HEAD
  // The CUtensorMap bytes. Python objects are only 16-byte aligned, so the 64/128-aligned
  // TensorMap is copied in and out (kernels receive these bytes by value anyway).
  alignas(16) unsigned char bytes[128];
  enum class Kind : std::uint8_t { Raw, Tiled, Im2col } kind;
  TiledParams tiled;    // when kind == Tiled (address kept current)
  Im2colParams im2col;  // when kind == Im2col

  [[nodiscard]] TensorMap map() const noexcept {
    return TensorMap::from_bytes(std::span<const std::byte, 128>(
        reinterpret_cast<const std::byte*>(bytes), 128));
  }
  void set_map(const TensorMap& m) noexcept { std::memcpy(bytes, m.data(), 128); }
};

// The Python type (set up by bind_tensor_map).
extern PyTypeObject* g_tensor_map_type;

// A new TensorMap object of `kind`, its bytes and geometry left for the caller to set (or
// not: all members are trivially destructible, and the geometry is only read for the
// matching kind). nullptr with a Python error set when out of memory.
PyTensorMap* new_py_tensor_map(PyTensorMap::Kind kind) noexcept;
// The type's tp_dealloc and tp_richcompare.
void py_tensor_map_dealloc(PyObject* self);
PyObject* py_tensor_map_richcompare(PyObject* a, PyObject* b, int op);

// `obj` as a TensorMap, or nullptr when it is not one.
inline PyTensorMap* as_tensor_map(PyObject* obj) noexcept {
  return g_tensor_map_type && PyObject_TypeCheck(obj, g_tensor_map_type)
             ? reinterpret_cast<PyTensorMap*>(obj)
             : nullptr;
}

}  // namespace nanocuda::py
