// Lookup of __dlpack_c_exchange_api__ (the DLPack C exchange API), cached per Python type.
#include "dlpack_exchange.h"

#include <array>
#include <utility>

namespace nanocuda::py {

namespace {

TensorViewReader lookup(PyTypeObject* type) {
  PyObject* attr = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type),
                                          "__dlpack_c_exchange_api__");
  if (!attr) {
    PyErr_Clear();
    return nullptr;
  }
  void* table = nullptr;
  if (PyCapsule_IsValid(attr, "dlpack_exchange_api"))
    table = PyCapsule_GetPointer(attr, "dlpack_exchange_api");
  Py_DECREF(attr);  // the type keeps the capsule, and the table is a producer singleton
  auto* header = static_cast<dlpack::ExchangeApiHeader*>(table);
  // Walk to a table of major version 1 (the struct layout nanocuda knows).
  while (header && header->version.major != 1) header = header->prev_api;
  if (!header) return nullptr;
  return reinterpret_cast<dlpack::ExchangeApi*>(header)->dltensor_from_py_object_no_sync;
}

}  // namespace

TensorViewReader exchange_reader(PyTypeObject* type) {
  // A handful of tensor types per process; the GIL serializes access.
  static std::array<std::pair<PyTypeObject*, TensorViewReader>, 8> cache{};
  static size_t next = 0;
  for (auto& [t, r] : cache)
    if (t == type) return r;
  TensorViewReader reader = lookup(type);
  Py_INCREF(reinterpret_cast<PyObject*>(type));  // keep the cached address meaningful
  auto& slot = cache[next++ % cache.size()];
  if (slot.first) Py_DECREF(reinterpret_cast<PyObject*>(slot.first));
  slot = {type, reader};
  return reader;
}

}  // namespace nanocuda::py
