// Lookup of __dlpack_c_exchange_api__ (the DLPack C exchange API), cached per Python type.
#include "interop/dlpack_exchange.h"

#include <array>
#include <stdexcept>
#include <utility>

#include "fastpath/type_cache.h"

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

// A handful of tensor types per process.
TypeCache<TensorViewReader, 8> g_readers;
// Overrides live apart from the cache, which may evict them.
std::array<std::pair<PyTypeObject*, TensorViewReader>, 4> g_overrides{};
PyObject* g_first_sight_hook = nullptr;  // nanocuda.torch_bridge._autoload, or none

}  // namespace

TensorViewReader exchange_reader(PyTypeObject* type) {
  if (TensorViewReader* r = g_readers.find(type)) return *r;
  if (g_first_sight_hook) {
    // Once per type: lets an already-built torch bridge install itself before the first
    // read. It must not break the read: a failure is reported as a warning and ignored.
    PyObject* r = PyObject_CallOneArg(g_first_sight_hook, reinterpret_cast<PyObject*>(type));
    if (r) {
      Py_DECREF(r);
    } else {
      PyErr_WriteUnraisable(g_first_sight_hook);
    }
    if (TensorViewReader* r = g_readers.find(type)) return *r;
  }
  TensorViewReader reader = nullptr;
  for (auto& [t, r] : g_overrides)
    if (t == type) reader = r;
  if (!reader) reader = lookup(type);
  g_readers.put(type, reader);
  return reader;
}

TensorViewReader producer_reader(PyTypeObject* type) { return lookup(type); }

bool reader_overridden(PyTypeObject* type) { return replacement_reader(type) != nullptr; }

TensorViewReader replacement_reader(PyTypeObject* type) {
  for (auto& [t, r] : g_overrides)
    if (t == type) return r;
  return nullptr;
}

void set_first_sight_hook(PyObject* hook) {
  if (hook == Py_None) hook = nullptr;
  Py_XINCREF(hook);
  Py_XDECREF(g_first_sight_hook);
  g_first_sight_hook = hook;
}

void override_reader(PyTypeObject* type, TensorViewReader reader) {
  auto* free_slot = static_cast<std::pair<PyTypeObject*, TensorViewReader>*>(nullptr);
  for (auto& o : g_overrides) {
    if (o.first == type) free_slot = &o;
    else if (!o.first && !free_slot) free_slot = &o;
  }
  if (!free_slot) throw std::runtime_error("too many tensor types with a replacement reader");
  if (!free_slot->first) Py_INCREF(reinterpret_cast<PyObject*>(type));
  *free_slot = {type, reader};
  g_readers.put(type, reader ? reader : lookup(type));
}

}  // namespace nanocuda::py
