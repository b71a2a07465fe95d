// StridedMemoryView's DLPack C exchange API: the table behind its __dlpack_c_exchange_api__.
#include <nanobind/nanobind.h>

#include <Python.h>

#include <cstdint>
#include <vector>

#include "bindings.h"
#include "nanocuda/core/array_view.h"
#include "nanocuda/core/dlpack.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

constexpr const char* kApi = "StridedMemoryView's DLPack exchange API";
PyObject* g_view_type = nullptr;   // nanocuda.utils.StridedMemoryView (kept for the process)
PyObject* g_from_parts = nullptr;  // builds a view from a tensor's fields and its owner

bool is_view(PyObject* obj, const char* fn) {
  int ok = PyObject_IsInstance(obj, g_view_type);
  if (ok == 0)
    PyErr_Format(PyExc_TypeError, "%s: %s: py_object must be a StridedMemoryView, got %s", kApi, fn,
                 Py_TYPE(obj)->tp_name);
  return ok == 1;
}

int allocator(dlpack::Tensor*, dlpack::ManagedTensorVersioned** out, void* error_ctx,
              dlpack::SetError set_error) {
  if (out) *out = nullptr;
  const char* text = "StridedMemoryView's DLPack exchange API: managed_tensor_allocator is not "
                     "supported (a view never allocates memory)";
  if (set_error) set_error(error_ctx, "NotImplementedError", text);
  else PyErr_SetString(PyExc_NotImplementedError, text);
  return -1;
}

// The view's own versioned export; the capsule is marked used and its tensor handed over.
int managed_from_py(void* py_object, dlpack::ManagedTensorVersioned** out) {
  *out = nullptr;
  auto* obj = static_cast<PyObject*>(py_object);
  if (!is_view(obj, "managed_tensor_from_py_object_no_sync")) return -1;
  PyObject* method = PyObject_GetAttrString(obj, "__dlpack__");
  if (!method) return -1;
  PyObject* args = PyTuple_New(0);
  PyObject* kwargs = Py_BuildValue("{s:(ii)}", "max_version", 1, 0);
  PyObject* capsule = args && kwargs ? PyObject_Call(method, args, kwargs) : nullptr;
  Py_DECREF(method);
  Py_XDECREF(args);
  Py_XDECREF(kwargs);
  if (!capsule) return -1;
  auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
  if (m) PyCapsule_SetName(capsule, "used_dltensor_versioned");  // its destructor now leaves it
  Py_DECREF(capsule);
  if (!m) return -1;
  *out = m;
  return 0;
}

void release_owned(PyObject* capsule) {
  auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, "nanocuda.dlpack_owned"));
  if (m && m->deleter) m->deleter(m);
}

PyObject* int_tuple(const int64_t* values, int32_t n) {
  PyObject* t = PyTuple_New(n);
  for (int32_t i = 0; t && i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(values[i]);
    if (!v) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

// A new view owning `tensor` (a capsule calls its deleter when the view goes).
int managed_to_py(dlpack::ManagedTensorVersioned* tensor, void** out_py_object) {
  if (out_py_object) *out_py_object = nullptr;
  if (!tensor) {
    PyErr_Format(PyExc_RuntimeError, "%s: managed_tensor_to_py_object_no_sync: tensor cannot be NULL", kApi);
    return -1;
  }
  const dlpack::Tensor& t = tensor->dl_tensor;
  const DType* dtype = find_dtype(t.dtype);
  if (!dtype) {
    PyErr_Format(PyExc_BufferError, "%s: unsupported DLPack dtype (code %d, %d bits, %d lanes)", kApi,
                 t.dtype.code, t.dtype.bits, t.dtype.lanes);
    return -1;
  }
  std::vector<int64_t> strides = t.strides ? std::vector<int64_t>(t.strides, t.strides + t.ndim)
                                           : compact_strides({t.shape, static_cast<size_t>(t.ndim)});
  PyObject* shape_t = int_tuple(t.shape, t.ndim);
  PyObject* strides_t = int_tuple(strides.data(), t.ndim);
  PyObject* keeper = shape_t && strides_t ? PyCapsule_New(tensor, "nanocuda.dlpack_owned", release_owned) : nullptr;
  PyObject* view = nullptr;
  if (keeper) {
    uint64_t ptr = reinterpret_cast<uint64_t>(t.data) + t.byte_offset;
    bool readonly = (tensor->flags & dlpack::kFlagReadOnly) != 0;
    view = PyObject_CallFunction(g_from_parts, "KiisOOOO", static_cast<unsigned long long>(ptr),
                                 t.device.device_type, t.device.device_id, dtype->name, shape_t,
                                 strides_t, readonly ? Py_True : Py_False, keeper);
  }
  Py_XDECREF(shape_t);
  Py_XDECREF(strides_t);
  Py_XDECREF(keeper);
  if (!view) return -1;
  *out_py_object = view;  // a new reference, the caller's
  return 0;
}

// A borrowed DLTensor of the view; shape and strides point into bytes the view keeps.
int dltensor_from_py(void* py_object, dlpack::Tensor* out) {
  auto* obj = static_cast<PyObject*>(py_object);
  if (!is_view(obj, "dltensor_from_py_object_no_sync")) return -1;
  PyObject* parts = PyObject_CallMethod(obj, "_dltensor_parts", nullptr);
  if (!parts) return -1;
  unsigned long long ptr = 0;
  int device_type = 0, device_id = 0, code = 0, bits = 0, lanes = 0, ndim = 0;
  PyObject* dims = nullptr;
  int ok = PyArg_ParseTuple(parts, "KiiiiiiS", &ptr, &device_type, &device_id, &code, &bits, &lanes,
                            &ndim, &dims);
  if (ok) {
    auto* values = reinterpret_cast<int64_t*>(PyBytes_AS_STRING(dims));
    *out = dlpack::Tensor{reinterpret_cast<void*>(static_cast<uintptr_t>(ptr)),
                          {device_type, device_id},
                          ndim,
                          {static_cast<uint8_t>(code), static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)},
                          values,
                          values + ndim,
                          0};
  }
  Py_DECREF(parts);  // `dims` stays alive: the view caches it
  return ok ? 0 : -1;
}

int current_work_stream(int32_t, int32_t, void** out_stream) {
  if (out_stream) *out_stream = nullptr;  // views have no current stream (as cuda.core's)
  return 0;
}

dlpack::ExchangeApi g_api{{{1, 2}, nullptr}, allocator, managed_from_py, managed_to_py,
                          dltensor_from_py, current_work_stream};

}  // namespace

void bind_smv_exchange(nb::module_& m) {
  internal_module(m).def("smv_exchange_api", [](nb::handle view_type, nb::handle from_parts) {
        if (!g_view_type) {
          g_view_type = Py_NewRef(view_type.ptr());
          g_from_parts = Py_NewRef(from_parts.ptr());
        }
        return nb::steal(PyCapsule_New(&g_api, "dlpack_exchange_api", nullptr));
      },
      nb::arg("view_type"), nb::arg("from_parts"),
      "The capsule of StridedMemoryView's DLPack C exchange API (set up once per process).");
}

}  // namespace nanocuda::py
