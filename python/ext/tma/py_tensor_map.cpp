// The Python TensorMap object's storage: creation from a small free list, deallocation, and
// equality (the same 128 bytes).
#include "tma/py_tensor_map.h"

#include <array>
#include <new>

namespace nanocuda::py {

PyTypeObject* g_tensor_map_type = nullptr;

namespace {

// Seed-000 loops make and drop a few maps per launch; recycling their memory skips the
// allocator both ways. Guarded by the GIL like every other access to these objects.
struct FreeList {
  std::array<PyTensorMap*, 16> items{};
  std::size_t count = 0;
};
FreeList g_free;

}  // namespace

PyTensorMap* new_py_tensor_map(PyTensorMap::Kind kind) noexcept {
  PyTensorMap* o;
  if (g_free.count) [[likely]] {
    o = g_free.items[--g_free.count];
    PyObject_Init(reinterpret_cast<PyObject*>(o), g_tensor_map_type);
  } else {
    o = PyObject_New(PyTensorMap, g_tensor_map_type);
    if (!o) return nullptr;
  }
  o->kind = kind;
  return o;
}

void py_tensor_map_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  // The C++ members are trivially destructible: nothing to run before reuse or free.
  if (g_free.count < g_free.items.size())
    g_free.items[g_free.count++] = reinterpret_cast<PyTensorMap*>(self);
  else
    type->tp_free(self);
  Py_DECREF(type);  // heap types are referenced by their instances (PyObject_Init took one)
}

PyObject* py_tensor_map_richcompare(PyObject* a, PyObject* b, int op) {
  PyTensorMap* x = as_tensor_map(a);
  PyTensorMap* y = as_tensor_map(b);
  if (!x || !y || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
  bool equal = std::memcmp(x->bytes, y->bytes, 128) == 0;
  return PyBool_FromLong(equal == (op == Py_EQ));
}

}  // namespace nanocuda::py
