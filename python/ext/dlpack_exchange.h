// Finds a Python type's DLPack C exchange API once, so hot paths read tensors with one C call.
#pragma once

#include <Python.h>

#include "dlpack.h"

namespace nanocuda::py {

using TensorViewReader = int (*)(void* py_object, dlpack::Tensor* out);

// The type's dltensor_from_py_object_no_sync, or nullptr when the type has no usable
// exchange API (attribute absent, wrong capsule, no 1.x table). Cached per type.
TensorViewReader exchange_reader(PyTypeObject* type);

}  // namespace nanocuda::py
