// DLPack export of Buffers and strided views: the capsule (versioned or not) that keeps the
// exporting object alive for as long as the consumer holds the tensor.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include <type_traits>
#include <vector>

#include "core/py_buffer.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

// Keeps the exporting Python object alive for as long as a consumer holds the tensor.
struct ExportContext {
  PyObject* owner;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // empty: compact row-major
};

template <class Managed>
void release_export(Managed* m) {
  auto* ctx = static_cast<ExportContext*>(m->manager_ctx);
  PyGILState_STATE gil = PyGILState_Ensure();  // consumers may call this without the GIL
  Py_DECREF(ctx->owner);
  PyGILState_Release(gil);
  delete ctx;
  delete m;
}

template <class Managed>
void capsule_destructor(PyObject* capsule) {
  // Only an unconsumed capsule still owns its tensor (consumers rename it "used_...").
  const char* name = std::is_same_v<Managed, dlpack::ManagedTensor> ? "dltensor" : "dltensor_versioned";
  if (PyCapsule_IsValid(capsule, name))
    if (auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name))) m->deleter(m);
}

void fill(dlpack::Tensor& t, void* data, dlpack::Device dev, const DType& dtype, ExportContext* ctx) {
  t.data = data;
  t.device = dev;
  t.ndim = static_cast<int32_t>(ctx->shape.size());
  t.dtype = dtype.dl;
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.empty() ? nullptr : ctx->strides.data();  // nullptr: compact
  t.byte_offset = 0;
}

}  // namespace

nb::object export_dlpack(nb::handle owner, void* data, dlpack::Device dev, const DType& dtype,
                         const Shape& shape, nb::handle max_version) {
  return export_dlpack_strided(owner, data, dev, dtype, shape.vector(), {}, max_version, false,
                               "Buffer.__dlpack__");
}

nb::object export_dlpack_strided(nb::handle owner, void* data, dlpack::Device dev, const DType& dtype,
                                 std::vector<int64_t> shape, std::vector<int64_t> strides,
                                 nb::handle max_version, bool readonly, const char* where) {
  // The protocol's max_version is a (major, minor) tuple of ints; anything else is named
  // (checked before the owner is referenced, so a refusal leaks nothing).
  if (!max_version.is_none() && (!PyTuple_Check(max_version.ptr()) || PyTuple_GET_SIZE(max_version.ptr()) != 2 ||
                                 !PyLong_Check(PyTuple_GET_ITEM(max_version.ptr(), 0))))
    throw nb::type_error((std::string(where) + ": max_version must be a (major, minor) tuple of ints or None, got " +
                          nb::cast<std::string>(nb::repr(max_version))).c_str());
  if (!strides.empty() && strides.size() != shape.size())
    throw nb::value_error((std::string(where) + ": " + std::to_string(strides.size()) + " strides for " +
                           std::to_string(shape.size()) + " dimensions").c_str());
  bool versioned = !max_version.is_none() && nb::cast<long long>(max_version[0]) >= 1;
  auto* ctx = new ExportContext{owner.ptr(), std::move(shape), std::move(strides)};
  Py_INCREF(owner.ptr());
  if (versioned) {
    auto* m = new dlpack::ManagedTensorVersioned{};
    m->version = {1, 0};
    m->manager_ctx = ctx;
    m->deleter = release_export<dlpack::ManagedTensorVersioned>;
    m->flags = readonly ? dlpack::kFlagReadOnly : 0;
    fill(m->dl_tensor, data, dev, dtype, ctx);
    return nb::steal(PyCapsule_New(m, "dltensor_versioned",
                                   capsule_destructor<dlpack::ManagedTensorVersioned>));
  }
  auto* m = new dlpack::ManagedTensor{};  // pre-1.0 capsules carry no read-only flag
  m->manager_ctx = ctx;
  m->deleter = release_export<dlpack::ManagedTensor>;
  fill(m->dl_tensor, data, dev, dtype, ctx);
  return nb::steal(PyCapsule_New(m, "dltensor", capsule_destructor<dlpack::ManagedTensor>));
}

}  // namespace nanocuda::py
