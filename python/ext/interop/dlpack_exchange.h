// Finds a Python type's DLPack C exchange API once, so hot paths read tensors with one C call.
#pragma once

#include <Python.h>

#include "nanocuda/core/dlpack.h"

namespace nanocuda::py {

using TensorViewReader = int (*)(void* py_object, dlpack::Tensor* out);

// The type's dltensor_from_py_object_no_sync, or nullptr when the type has no usable
// exchange API (attribute absent, wrong capsule, no 1.x table). Cached per type.
TensorViewReader exchange_reader(PyTypeObject* type);

// The type's own exchange function, ignoring any override (what a replacement falls back to).
TensorViewReader producer_reader(PyTypeObject* type);

// Whether `type` has a replacement reader installed (no lookup, no hook).
bool reader_overridden(PyTypeObject* type);

// The replacement reader installed for `type` (nullptr: none).
TensorViewReader replacement_reader(PyTypeObject* type);

// Called with each type the first time a reader is looked up for it (None: no hook).
void set_first_sight_hook(PyObject* hook);

// Makes `reader` the type's reader from now on (nullptr: back to the producer's own). Slots
// that already chose a reader (a Launcher's, per argument) keep theirs.
void override_reader(PyTypeObject* type, TensorViewReader reader);

}  // namespace nanocuda::py
