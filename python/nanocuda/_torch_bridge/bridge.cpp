// nanocuda's torch bridge: reads a torch.Tensor's data pointer, device, dtype, sizes and
// strides straight from the at::Tensor, filling a DLPack DLTensor view like torch's own
// dltensor_from_py_object_no_sync, at a fraction of its cost.
//
// Built on the user's machine against the installed torch (torch.utils.cpp_extension), so
// it is ABI-correct for that torch; nanocuda never links torch itself. Anything unusual
// (no storage, conj/neg bits, a non-strided layout, a device or dtype not listed here, a
// C++ exception) is handed to torch's own exchange function, which nanocuda places in
// `fallback` before using the reader, so results and errors match the exchange API exactly.
#include <Python.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>

namespace {

struct DLDevice { int32_t device_type; int32_t device_id; };
struct DLDataType { uint8_t code; uint8_t bits; uint16_t lanes; };
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
using Reader = int (*)(void*, DLTensor*);

Reader fallback = nullptr;  // torch's dltensor_from_py_object_no_sync, set by nanocuda

bool dl_dtype(c10::ScalarType t, DLDataType* out) {
  using S = c10::ScalarType;
  auto set = [&](uint8_t code, uint8_t bits) { *out = {code, bits, 1}; return true; };
  switch (t) {
    case S::Bool: return set(6, 8);
    case S::Byte: return set(1, 8);
    case S::UInt16: return set(1, 16);
    case S::UInt32: return set(1, 32);
    case S::UInt64: return set(1, 64);
    case S::Char: return set(0, 8);
    case S::Short: return set(0, 16);
    case S::Int: return set(0, 32);
    case S::Long: return set(0, 64);
    case S::Half: return set(2, 16);
    case S::Float: return set(2, 32);
    case S::Double: return set(2, 64);
    case S::BFloat16: return set(4, 16);
    case S::ComplexFloat: return set(5, 64);
    case S::ComplexDouble: return set(5, 128);
    case S::Float8_e4m3fn: return set(10, 8);
    case S::Float8_e5m2: return set(12, 8);
    default: return false;
  }
}

extern "C" int nanocuda_torch_read(void* obj, DLTensor* out) {
  try {
    const at::Tensor& t = THPVariable_Unpack(static_cast<PyObject*>(obj));
    if (!t.has_storage() || t.layout() != c10::kStrided || t.is_conj() || t.is_neg() ||
        !dl_dtype(t.scalar_type(), &out->dtype))
      return fallback(obj, out);
    const c10::Device d = t.device();
    if (d.is_cuda()) out->device = {2, d.index()};
    else if (d.is_cpu()) out->device = {1, 0};
    else return fallback(obj, out);
    out->data = t.data_ptr();
    out->ndim = static_cast<int32_t>(t.dim());
    out->shape = const_cast<int64_t*>(t.sizes().data());
    out->strides = const_cast<int64_t*>(t.strides().data());
    out->byte_offset = 0;
    return 0;
  } catch (...) {
    return fallback(obj, out);
  }
}

}  // namespace

#define NANOCUDA_CONCAT2(a, b) a##b
#define NANOCUDA_CONCAT(a, b) NANOCUDA_CONCAT2(a, b)
#define NANOCUDA_STR2(a) #a
#define NANOCUDA_STR(a) NANOCUDA_STR2(a)

static PyModuleDef module_def = {PyModuleDef_HEAD_INIT, NANOCUDA_STR(TORCH_EXTENSION_NAME),
                                 nullptr, -1, nullptr, nullptr, nullptr, nullptr, nullptr};

// The module holds two capsules: the reader, and the slot for torch's own function.
PyMODINIT_FUNC NANOCUDA_CONCAT(PyInit_, TORCH_EXTENSION_NAME)(void) {
  PyObject* m = PyModule_Create(&module_def);
  if (!m) return nullptr;
  PyObject* reader = PyCapsule_New(reinterpret_cast<void*>(&nanocuda_torch_read),
                                   "nanocuda.torch_reader", nullptr);
  PyObject* slot = PyCapsule_New(reinterpret_cast<void*>(&fallback),
                                 "nanocuda.torch_reader_fallback", nullptr);
  if (!reader || !slot || PyModule_AddObject(m, "reader", reader) < 0 ||
      PyModule_AddObject(m, "fallback_slot", slot) < 0) {
    Py_XDECREF(reader);
    Py_XDECREF(slot);
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
