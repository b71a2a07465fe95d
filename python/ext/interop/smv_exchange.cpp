// StridedMemoryView's DLPack C exchange API: the table behind its __dlpack_c_exchange_api__.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.h"
#include "nanocuda/core/array_view.h"
#include "nanocuda/core/dlpack.h"
#include "fastpath/fastcall.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

constexpr const char* kApi = "StridedMemoryView's DLPack exchange API";
PyObject* g_view_type = nullptr;   // nanocuda.utils.StridedMemoryView (kept for the process)
PyObject* g_from_parts = nullptr;  // builds a view from a tensor's fields and its owner

// Raises TypeError unless `obj` is a StridedMemoryView.
void check_view(PyObject* obj, const char* fn) {
  int ok = PyObject_IsInstance(obj, g_view_type);
  if (ok < 0) throw nb::python_error();
  if (ok == 0)
    throw nb::type_error((std::string(kApi) + ": " + fn + ": py_object must be a StridedMemoryView, got " +
                          Py_TYPE(obj)->tp_name).c_str());
}

int allocator(dlpack::Tensor*, dlpack::ManagedTensorVersioned** out, void* error_ctx,
              dlpack::SetError set_error) {
  if (out) *out = nullptr;
  const std::string text = std::string(kApi) + ": managed_tensor_allocator is not supported (a view "
                           "never allocates memory)";
  if (!set_error) throw NotImplementedError(text);
  set_error(error_ctx, "NotImplementedError", text.c_str());
  return -1;
}

// The view's own versioned export; the capsule is marked used and its tensor handed over.
int managed_from_py(void* py_object, dlpack::ManagedTensorVersioned** out) {
  *out = nullptr;
  nb::handle obj(static_cast<PyObject*>(py_object));
  check_view(obj.ptr(), "managed_tensor_from_py_object_no_sync");
  nb::object capsule = obj.attr("__dlpack__")(nb::arg("max_version") = nb::make_tuple(1, 0));
  auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor_versioned"));
  if (!m) throw nb::python_error();
  PyCapsule_SetName(capsule.ptr(), "used_dltensor_versioned");  // its destructor now leaves it
  *out = m;
  return 0;
}

void release_owned(PyObject* capsule) {
  auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, "nanocuda.dlpack_owned"));
  if (m && m->deleter) m->deleter(m);
}

nb::tuple int_tuple(const int64_t* values, int32_t n) {
  nb::list out;
  for (int32_t i = 0; i < n; ++i) out.append(values[i]);
  return nb::tuple(out);
}

// A new view owning `tensor` (a capsule calls its deleter when the view goes).
int managed_to_py(dlpack::ManagedTensorVersioned* tensor, void** out_py_object) {
  if (out_py_object) *out_py_object = nullptr;
  if (!tensor)
    throw std::runtime_error(std::string(kApi) + ": managed_tensor_to_py_object_no_sync: tensor cannot be NULL");
  const dlpack::Tensor& t = tensor->dl_tensor;
  const DType* dtype = find_dtype(t.dtype);
  if (!dtype)
    throw nb::buffer_error((std::string(kApi) + ": unsupported DLPack dtype (code " + std::to_string(t.dtype.code) +
                            ", " + std::to_string(t.dtype.bits) + " bits, " + std::to_string(t.dtype.lanes) +
                            " lanes)").c_str());
  std::vector<int64_t> strides = t.strides ? std::vector<int64_t>(t.strides, t.strides + t.ndim)
                                           : compact_strides({t.shape, static_cast<size_t>(t.ndim)});
  nb::tuple shape_t = int_tuple(t.shape, t.ndim), strides_t = int_tuple(strides.data(), t.ndim);
  nb::object keeper = nb::steal(PyCapsule_New(tensor, "nanocuda.dlpack_owned", release_owned));
  if (!keeper) throw nb::python_error();
  uint64_t ptr = reinterpret_cast<uint64_t>(t.data) + t.byte_offset;
  bool readonly = (tensor->flags & dlpack::kFlagReadOnly) != 0;
  nb::object view = nb::borrow(g_from_parts)(ptr, t.device.device_type, t.device.device_id, dtype->name,
                                             shape_t, strides_t, readonly, keeper);
  *out_py_object = view.release().ptr();  // a new reference, the caller's
  return 0;
}

// A borrowed DLTensor of the view; shape and strides point into bytes the view keeps.
int dltensor_from_py(void* py_object, dlpack::Tensor* out) {
  nb::handle obj(static_cast<PyObject*>(py_object));
  check_view(obj.ptr(), "dltensor_from_py_object_no_sync");
  nb::tuple parts = nb::cast<nb::tuple>(obj.attr("_dltensor_parts")());
  nb::bytes dims = nb::cast<nb::bytes>(parts[7]);  // kept alive by the view, which caches it
  int ndim = nb::cast<int>(parts[6]);
  auto* values = reinterpret_cast<int64_t*>(const_cast<char*>(dims.c_str()));
  *out = dlpack::Tensor{reinterpret_cast<void*>(static_cast<uintptr_t>(nb::cast<uint64_t>(parts[0]))),
                        {nb::cast<int32_t>(parts[1]), nb::cast<int32_t>(parts[2])},
                        ndim,
                        {nb::cast<uint8_t>(parts[3]), nb::cast<uint8_t>(parts[4]), nb::cast<uint16_t>(parts[5])},
                        values,
                        values + ndim,
                        0};
  return 0;
}

int current_work_stream(int32_t, int32_t, void** out_stream) {
  if (out_stream) *out_stream = nullptr;  // views have no current stream (as cuda.core's)
  return 0;
}

// Every entry is guarded: a C++ exception becomes the Python error and a -1 return.
dlpack::ExchangeApi g_api{{{1, 2}, nullptr}, guarded<allocator>, guarded<managed_from_py>,
                          guarded<managed_to_py>, guarded<dltensor_from_py>, current_work_stream};

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
