// torch tensors read through libtorch's stable C ABI: no compiler, no torch headers, and a
// self-check against torch's own DLPack answers before the reader is ever used.
//
// A torch.Tensor object is a THPVariable: PyObject_HEAD followed by its at::Tensor (torch
// >= 2.10) or by c10::MaybeOwned<at::Tensor> (2.3-2.9: an 8-byte flag, then the tensor). The
// address of that at::Tensor is what the aoti_torch_* functions take as an AtenTensorHandle,
// and the at::Tensor's one word is the TensorImpl address torch reports as `tensor._cdata`.
// So instead of trusting a version number, prepare() looks for that word at both known
// places and takes the one that holds it for every probe; a future layout where neither does
// leaves the reader off (the exchange API keeps working) instead of crashing.
//
// Each aoti_torch_* call is an exported function with its own checks (20-50 instructions in
// torch 2.11), so read() makes only the calls a fact needs: a TensorImpl of the class every
// probe has (its vtable pointer, see g_plain_class) is strided and never nested, which spares
// the layout call and, for a launch's pointer slot, the sizes call that refuses nested tensors.
#include "interop/torch_abi.h"

#include <dlfcn.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

namespace nanocuda::py::torch_abi {

namespace {

using Handle = void*;
using Err = std::int32_t;  // AOTITorchError: 0 is success; torch catches its own exceptions
using Constant = std::int32_t (*)();

struct Api {
  Err (*data_ptr)(Handle, void**) = nullptr;
  Err (*dim)(Handle, std::int64_t*) = nullptr;
  Err (*sizes)(Handle, std::int64_t**) = nullptr;
  Err (*strides)(Handle, std::int64_t**) = nullptr;
  Err (*dtype)(Handle, std::int32_t*) = nullptr;
  Err (*device_type)(Handle, std::int32_t*) = nullptr;
  Err (*device_index)(Handle, std::int32_t*) = nullptr;
  Err (*layout)(Handle, std::int32_t*) = nullptr;  // optional: older torch lacks it
};

Api g_api;
std::size_t g_offset = 0;  // where the at::Tensor sits in the object
// The C++ vtable pointer (the first word of any polymorphic object, by the Itanium C++ ABI, not
// torch's private layout) that every probe's TensorImpl shares: the plain dense TensorImpl
// class. Nested, sparse, mkldnn and other tensor kinds are other classes, and an object never
// changes class, so an impl with this one needs no layout call and no nested-tensor sizes call.
// 0: the probes disagreed, and every read makes those calls.
std::uintptr_t g_plain_class = 0;
std::int32_t g_cpu = 0, g_cuda = 0, g_strided = 0;
// DLPack dtype by torch dtype code (c10::ScalarType values are small); bits 0: not handled.
std::array<dlpack::DataType, 64> g_dtypes{};
TensorViewReader g_fallback = nullptr;
bool g_ready = false;

template <typename F>
bool resolve(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

// Fills g_dtypes from torch's own dtype constants; complex dtypes are left to the producer.
void map_dtypes(void* lib) {
  struct Entry {
    const char* name;
    dlpack::DataType dl;
  };
  static constexpr Entry kEntries[] = {
      {"aoti_torch_dtype_bool", {dlpack::kBool, 8, 1}},
      {"aoti_torch_dtype_uint8", {dlpack::kUInt, 8, 1}},
      {"aoti_torch_dtype_uint16", {dlpack::kUInt, 16, 1}},
      {"aoti_torch_dtype_uint32", {dlpack::kUInt, 32, 1}},
      {"aoti_torch_dtype_uint64", {dlpack::kUInt, 64, 1}},
      {"aoti_torch_dtype_int8", {dlpack::kInt, 8, 1}},
      {"aoti_torch_dtype_int16", {dlpack::kInt, 16, 1}},
      {"aoti_torch_dtype_int32", {dlpack::kInt, 32, 1}},
      {"aoti_torch_dtype_int64", {dlpack::kInt, 64, 1}},
      {"aoti_torch_dtype_float16", {dlpack::kFloat, 16, 1}},
      {"aoti_torch_dtype_float32", {dlpack::kFloat, 32, 1}},
      {"aoti_torch_dtype_float64", {dlpack::kFloat, 64, 1}},
      {"aoti_torch_dtype_bfloat16", {dlpack::kBfloat, 16, 1}},
      {"aoti_torch_dtype_float8_e4m3fn", {dlpack::kFloat8_e4m3fn, 8, 1}},
      {"aoti_torch_dtype_float8_e5m2", {dlpack::kFloat8_e5m2, 8, 1}},
  };
  for (const Entry& e : kEntries) {
    Constant code = nullptr;
    if (!resolve(lib, e.name, code)) continue;  // a dtype this torch lacks: the producer's
    std::int32_t c = code();
    if (c >= 0 && c < static_cast<std::int32_t>(g_dtypes.size())) g_dtypes[c] = e.dl;
  }
}

// Resolves every function read() calls; the missing name, or "".
std::string resolve_api(void* lib) {
  struct Need {
    const char* name;
    void** slot;
  };
  Constant cpu = nullptr, cuda = nullptr, strided = nullptr;
  const Need needs[] = {
      {"aoti_torch_get_data_ptr", reinterpret_cast<void**>(&g_api.data_ptr)},
      {"aoti_torch_get_dim", reinterpret_cast<void**>(&g_api.dim)},
      {"aoti_torch_get_sizes", reinterpret_cast<void**>(&g_api.sizes)},
      {"aoti_torch_get_strides", reinterpret_cast<void**>(&g_api.strides)},
      {"aoti_torch_get_dtype", reinterpret_cast<void**>(&g_api.dtype)},
      {"aoti_torch_get_device_type", reinterpret_cast<void**>(&g_api.device_type)},
      {"aoti_torch_get_device_index", reinterpret_cast<void**>(&g_api.device_index)},
      {"aoti_torch_device_type_cpu", reinterpret_cast<void**>(&cpu)},
      {"aoti_torch_device_type_cuda", reinterpret_cast<void**>(&cuda)},
  };
  for (const Need& n : needs)
    if (!(*n.slot = dlsym(lib, n.name))) return n.name;
  g_cpu = cpu();
  g_cuda = cuda();
  if (resolve(lib, "aoti_torch_get_layout", g_api.layout) &&
      resolve(lib, "aoti_torch_layout_strided", strided))
    g_strided = strided();
  else
    g_api.layout = nullptr;
  map_dtypes(lib);
  return "";
}

std::uintptr_t word_at(PyObject* obj, std::size_t offset) {
  std::uintptr_t w;
  std::memcpy(&w, reinterpret_cast<const char*>(obj) + offset, sizeof w);
  return w;
}

// Where the at::Tensor is: the one known place holding each probe's TensorImpl address.
std::string find_offset(PyObject* probes) {
  const std::size_t head = sizeof(PyObject);
  const std::size_t candidates[] = {head, head + 8};
  std::size_t found = 0;
  int matches = 0;
  for (std::size_t c : candidates) {
    bool all = PyList_GET_SIZE(probes) > 0;
    for (Py_ssize_t i = 0; all && i < PyList_GET_SIZE(probes); ++i) {
      PyObject* pair = PyList_GET_ITEM(probes, i);
      PyObject* t = PyTuple_GET_ITEM(pair, 0);
      std::uintptr_t impl = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(pair, 1));
      if (PyErr_Occurred()) {
        PyErr_Clear();
        return "a probe's _cdata is not an address";
      }
      all = static_cast<std::size_t>(Py_TYPE(t)->tp_basicsize) >= c + sizeof(void*) &&
            impl != 0 && word_at(t, c) == impl;
    }
    if (all) {
      found = c;
      ++matches;
    }
  }
  if (matches != 1)
    return "torch.Tensor's object layout is not one nanocuda knows (the TensorImpl address "
           "torch reports is not where an at::Tensor sits in torch 2.3-2.11)";
  g_offset = found;
  return "";
}

// The class every probe's TensorImpl has, or 0 (see g_plain_class).
std::uintptr_t plain_class(PyObject* probes) {
  std::uintptr_t shared = 0;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(probes); ++i) {
    auto impl = word_at(PyTuple_GET_ITEM(PyList_GET_ITEM(probes, i), 0), g_offset);
    std::uintptr_t cls = impl ? word_at(reinterpret_cast<PyObject*>(impl), 0) : 0;
    if (!cls || (shared && cls != shared)) return 0;
    shared = cls;
  }
  return shared;
}

int refuse(void*, dlpack::Tensor*) { return -2; }  // the self-check's fallback: "not read"

bool same(const dlpack::Tensor& a, const dlpack::Tensor& b) {
  auto address = [](const dlpack::Tensor& t) {
    return reinterpret_cast<std::uintptr_t>(t.data) + t.byte_offset;
  };
  if (address(a) != address(b) || a.device.device_type != b.device.device_type ||
      a.device.device_id != b.device.device_id || a.ndim != b.ndim ||
      a.dtype.code != b.dtype.code || a.dtype.bits != b.dtype.bits ||
      a.dtype.lanes != b.dtype.lanes)
    return false;
  std::int64_t compact = 1;  // producers may leave strides out for compact tensors
  for (int d = a.ndim - 1; d >= 0; --d) {
    std::int64_t sa = a.strides ? a.strides[d] : compact, sb = b.strides ? b.strides[d] : compact;
    if (a.shape[d] != b.shape[d] || (a.shape[d] > 1 && sa != sb)) return false;
    compact *= a.shape[d];
  }
  return true;
}

// Every probe read by read() itself (no fallback) and equal to the producer's answer.
std::string self_check(PyObject* probes, TensorViewReader producer) {
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(probes); ++i) {
    PyObject* t = PyTuple_GET_ITEM(PyList_GET_ITEM(probes, i), 0);
    dlpack::Tensor mine{}, theirs{};
    if (producer(t, &theirs) != 0) {
      PyErr_Clear();
      return "torch's DLPack exchange function failed on probe " + std::to_string(i);
    }
    if (read(t, &mine) != 0) return "the C ABI could not read probe " + std::to_string(i);
    if (!same(mine, theirs))
      return "the C ABI's answer differs from torch's DLPack exchange on probe " +
             std::to_string(i);
    dlpack::Tensor pointer{};
    if (read_pointer(t, &pointer) != 0 || pointer.data != mine.data ||
        pointer.device.device_type != mine.device.device_type ||
        pointer.device.device_id != mine.device.device_id || pointer.dtype.code != mine.dtype.code ||
        pointer.dtype.bits != mine.dtype.bits || pointer.ndim != -1)
      return "the C ABI's pointer-only read differs from its full read on probe " + std::to_string(i);
  }
  return "";
}

}  // namespace

namespace {

// Whether the at::Tensor at `h` holds a plain dense TensorImpl (strided, never nested).
[[gnu::always_inline]] inline bool plain(Handle h) {
  auto impl = *static_cast<const std::uintptr_t*>(h);  // at::Tensor's one word: its TensorImpl
  return g_plain_class != 0 && *reinterpret_cast<const std::uintptr_t*>(impl) == g_plain_class;
}

// What read() and read_pointer() share: dtype, layout, device and address, with the checks
// that send anything unusual to the producer. False: `out` is the fallback's answer (or error).
// `is_plain`: plain(h), which makes the layout call needless.
[[gnu::always_inline]] inline bool read_head(Handle h, void* obj, dlpack::Tensor* out, int* fallback,
                                             bool is_plain) {
  std::int32_t dtype = -1, device_type = -1, device_index = 0, layout = g_strided;
  void* data = nullptr;
  if (g_api.dtype(h, &dtype) != 0 || dtype < 0 || dtype >= static_cast<std::int32_t>(g_dtypes.size()) ||
      g_dtypes[dtype].bits == 0 ||
      (!is_plain && g_api.layout && (g_api.layout(h, &layout) != 0 || layout != g_strided)) ||
      g_api.device_type(h, &device_type) != 0) {
    *fallback = g_fallback(obj, out);
    return false;
  }
  if (device_type == g_cuda) {
    if (g_api.device_index(h, &device_index) != 0) {
      *fallback = g_fallback(obj, out);
      return false;
    }
    out->device = {dlpack::kCUDA, device_index};
  } else if (device_type == g_cpu) {
    out->device = {dlpack::kCPU, 0};
  } else {
    *fallback = g_fallback(obj, out);
    return false;
  }
  if (g_api.data_ptr(h, &data) != 0) {
    *fallback = g_fallback(obj, out);
    return false;
  }
  out->data = data;
  out->dtype = g_dtypes[dtype];
  out->byte_offset = 0;
  return true;
}

}  // namespace

int read(void* obj, dlpack::Tensor* out) {
  Handle h = static_cast<char*>(obj) + g_offset;
  int fallback = 0;
  if (!read_head(h, obj, out, &fallback, plain(h))) return fallback;
  std::int64_t ndim = 0;
  std::int64_t* sizes = nullptr;
  std::int64_t* strides = nullptr;
  if (g_api.dim(h, &ndim) != 0 || g_api.sizes(h, &sizes) != 0 || g_api.strides(h, &strides) != 0)
    return g_fallback(obj, out);
  out->ndim = static_cast<std::int32_t>(ndim);
  out->shape = sizes;
  out->strides = strides;
  return 0;
}

int read_pointer(void* obj, dlpack::Tensor* out) {
  Handle h = static_cast<char*>(obj) + g_offset;
  int fallback = 0;
  const bool is_plain = plain(h);
  if (!read_head(h, obj, out, &fallback, is_plain)) return fallback;
  // sizes() is what refuses a nested tensor (strided layout, data, no sizes): asked (its
  // answer unused) unless the impl is plain, so such a tensor still goes to the producer.
  std::int64_t* sizes = nullptr;
  if (!is_plain && g_api.sizes(h, &sizes) != 0) return g_fallback(obj, out);
  out->ndim = -1;
  out->shape = nullptr;
  out->strides = nullptr;
  return 0;
}

TensorViewReader pointer_only(TensorViewReader reader) { return reader == &read ? &read_pointer : reader; }

TensorViewReader with_geometry(TensorViewReader reader) { return reader == &read_pointer ? &read : reader; }

bool ready() { return g_ready; }

std::string prepare(const std::vector<std::string>& libraries, PyObject* probes,
                    TensorViewReader producer) {
  if (g_ready) return "";
  if (!producer) return "torch.Tensor has no DLPack exchange function to check against";
  if (!PyList_Check(probes)) return "no probe tensors";
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(probes); ++i) {
    PyObject* p = PyList_GET_ITEM(probes, i);
    if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) != 2) return "a probe is not a (tensor, _cdata) pair";
  }
  void* lib = nullptr;
  for (const std::string& name : libraries)
    if ((lib = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD))) break;
  if (!lib) return "no libtorch is loaded in this process";
  // A failed check leaves the library as it was (dlopen counted one more reference).
  std::string why = resolve_api(lib);
  if (!why.empty()) why = "libtorch lacks " + why;
  if (why.empty()) why = find_offset(probes);
  if (why.empty()) g_plain_class = plain_class(probes);
  if (why.empty()) {
    g_fallback = refuse;
    why = self_check(probes, producer);
    g_fallback = producer;
  }
  if (!why.empty()) {
    g_api = Api{};
    g_dtypes = {};
    g_plain_class = 0;
    dlclose(lib);
    return why;
  }
  g_ready = true;  // lib stays referenced: read() calls into it for the process
  return "";
}

}  // namespace nanocuda::py::torch_abi
