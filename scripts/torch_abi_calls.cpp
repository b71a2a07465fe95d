// GPU-machine probe (scripts/gpu-torchcalls): what each libtorch aoti_torch_* call costs per tensor, next to a launch.
//
// Built there by torch.utils.cpp_extension against the installed torch (like the torch bridge),
// never part of nanocuda. run(tensors, variant, n, launch) reads every tensor `n` times with one
// of the variants below and, with `launch`, issues one cuLaunchKernel of an empty kernel per
// iteration (as a Launcher call does), so a call's cost is measured with the launch's cache
// traffic around it, not only in a hot loop.
#include <Python.h>
#include <dlfcn.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>
#include <ctime>

namespace {

using Handle = void*;
using Err = int32_t;
struct Api {
  Err (*data_ptr)(Handle, void**);
  Err (*dim)(Handle, int64_t*);
  Err (*sizes)(Handle, int64_t**);
  Err (*strides)(Handle, int64_t**);
  Err (*dtype)(Handle, int32_t*);
  Err (*device_type)(Handle, int32_t*);
  Err (*device_index)(Handle, int32_t*);
  Err (*layout)(Handle, int32_t*);
} g;
std::size_t g_offset = 0;

struct DLTensor {
  void* data;
  int32_t device_type, device_id;
  int32_t ndim;
  uint8_t code, bits;
  uint16_t lanes;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
using Reader = int (*)(void*, DLTensor*);
Reader g_exchange = nullptr;

using CUresult = int;
CUresult (*cuModuleLoadData)(void**, const void*);
CUresult (*cuModuleGetFunction)(void**, void*, const char*);
CUresult (*cuStreamCreate)(void**, unsigned);
CUresult (*cuStreamSynchronize)(void*);
CUresult (*cuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, void*, void**, void**);
void* g_function = nullptr;
void* g_stream = nullptr;

const char* kPtx = R"(.version 7.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n) { ret; }
)";

// The inline read the compiled torch bridge does (python/nanocuda/_torch_bridge/bridge.cpp).
inline void* bridge_read(PyObject* o, DLTensor* out) {
  const at::Tensor& t = THPVariable_Unpack(o);
  if (!t.has_storage() || t.layout() != c10::kStrided || t.is_conj() || t.is_neg()) return nullptr;
  out->code = static_cast<uint8_t>(t.scalar_type());
  const c10::Device d = t.device();
  if (!d.is_cuda()) return nullptr;
  out->device_id = d.index();
  out->data = t.data_ptr();
  out->ndim = static_cast<int32_t>(t.dim());
  out->shape = const_cast<int64_t*>(t.sizes().data());
  out->strides = const_cast<int64_t*>(t.strides().data());
  return out->data;
}

enum Variant { NONE, BRIDGE, ABI8, ABI6, ABI5, ABI4, ABI3, ABI2, ABI1, EXCHANGE, COUNT };
const char* kNames[COUNT] = {
    "none (pointers read once: the C++ loop)",
    "bridge inline read (compiled, full)",
    "abi 8 calls: full read() today",
    "abi 6 calls: read_pointer() today (dtype layout dev_type dev_index data sizes)",
    "abi 5 calls: without layout",
    "abi 4 calls: dtype dev_type dev_index data",
    "abi 3 calls: dev_type dev_index data",
    "abi 2 calls: dev_index data",
    "abi 1 call: data",
    "torch DLPack exchange dltensor_from_py_object_no_sync",
};

template <int V>
inline void* read(PyObject* o) {
  Handle h = reinterpret_cast<char*>(o) + g_offset;
  void* data = nullptr;
  int32_t dtype = 0, dt = 0, di = 0, layout = 0;
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  int64_t ndim = 0;
  Err e = 0;
  if constexpr (V == BRIDGE) {
    DLTensor t;
    return bridge_read(o, &t);
  } else if constexpr (V == EXCHANGE) {
    DLTensor t;
    if (g_exchange(o, &t) != 0) return nullptr;
    return static_cast<char*>(t.data) + t.byte_offset;
  } else {
    if constexpr (V == ABI8 || V == ABI6 || V == ABI5 || V == ABI4) e |= g.dtype(h, &dtype);
    if constexpr (V == ABI8 || V == ABI6) e |= g.layout(h, &layout);
    if constexpr (V != ABI2 && V != ABI1) e |= g.device_type(h, &dt);
    if constexpr (V != ABI1) e |= g.device_index(h, &di);
    e |= g.data_ptr(h, &data);
    if constexpr (V == ABI8) e |= g.dim(h, &ndim);
    if constexpr (V == ABI8 || V == ABI6 || V == ABI5) e |= g.sizes(h, &sizes);
    if constexpr (V == ABI8) e |= g.strides(h, &strides);
    if (e || dtype < 0 || layout != 0 || dt < 0 || di < 0) return nullptr;
    return data;
  }
}

double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

template <int V>
double loop(PyObject** objs, int count, long n, bool launch) {
  void* cached[3] = {};
  for (int k = 0; k < count; ++k) cached[k] = read<ABI1>(objs[k]);
  int ival = 1;
  double t0 = now_ns();
  for (long i = 0; i < n; ++i) {
    void* p[3] = {cached[0], cached[1], cached[2]};
    if constexpr (V != NONE)
      for (int k = 0; k < count; ++k) p[k] = read<V>(objs[k]);
    if (launch) {
      void* args[4] = {&p[0], &p[1], &p[2], &ival};
      cuLaunchKernel(g_function, 1, 1, 1, 1, 1, 1, 0, g_stream, args, nullptr);
      if ((i & 1023) == 1023) cuStreamSynchronize(g_stream);
    } else {
      asm volatile("" : : "r"(p[0]), "r"(p[1]), "r"(p[2]) : "memory");
    }
  }
  if (launch) cuStreamSynchronize(g_stream);
  return (now_ns() - t0) / n;
}

template <typename F>
bool need(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out) PyErr_Format(PyExc_RuntimeError, "missing %s", name);
  return out != nullptr;
}

// setup(tensor, exchange_capsule, libtorch_cpu_path): resolves the ABI (in the libtorch torch
// loaded RTLD_LOCAL, as nanocuda does) and the driver, loads the kernel.
PyObject* setup(PyObject*, PyObject* args) {
  PyObject *t, *capsule;
  const char* path;
  if (!PyArg_ParseTuple(args, "OOs", &t, &capsule, &path)) return nullptr;
  g_offset = reinterpret_cast<const char*>(&THPVariable_Unpack(t)) - reinterpret_cast<char*>(t);
  void* lib = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return PyErr_Format(PyExc_RuntimeError, "%s is not loaded", path);
  if (!need(lib, "aoti_torch_get_data_ptr", g.data_ptr) || !need(lib, "aoti_torch_get_dim", g.dim) ||
      !need(lib, "aoti_torch_get_sizes", g.sizes) || !need(lib, "aoti_torch_get_strides", g.strides) ||
      !need(lib, "aoti_torch_get_dtype", g.dtype) ||
      !need(lib, "aoti_torch_get_device_type", g.device_type) ||
      !need(lib, "aoti_torch_get_device_index", g.device_index) ||
      !need(lib, "aoti_torch_get_layout", g.layout))
    return nullptr;
  struct Header { uint32_t major, minor; Header* prev; };
  auto* h = static_cast<Header*>(PyCapsule_GetPointer(capsule, "dlpack_exchange_api"));
  if (!h) return nullptr;
  while (h && h->major != 1) h = h->prev;
  if (!h) return PyErr_Format(PyExc_RuntimeError, "no exchange table of major 1");
  g_exchange = reinterpret_cast<Reader*>(reinterpret_cast<char*>(h) + sizeof(Header))[3];
  void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!cuda) return PyErr_Format(PyExc_RuntimeError, "libcuda is not loaded");
  if (!need(cuda, "cuModuleLoadData", cuModuleLoadData) ||
      !need(cuda, "cuModuleGetFunction", cuModuleGetFunction) ||
      !need(cuda, "cuStreamCreate", cuStreamCreate) ||
      !need(cuda, "cuStreamSynchronize", cuStreamSynchronize) ||
      !need(cuda, "cuLaunchKernel", cuLaunchKernel))
    return nullptr;
  void* module = nullptr;
  int r = cuModuleLoadData(&module, kPtx);
  if (r || (r = cuModuleGetFunction(&g_function, module, "k")) || (r = cuStreamCreate(&g_stream, 1)))
    return PyErr_Format(PyExc_RuntimeError, "driver error %d", r);
  return PyLong_FromSize_t(g_offset);
}

// run(tuple_of_up_to_3_tensors, variant, n, launch) -> ns per iteration.
PyObject* run(PyObject*, PyObject* args) {
  PyObject* tup;
  int variant, launch;
  long n;
  if (!PyArg_ParseTuple(args, "O!ili", &PyTuple_Type, &tup, &variant, &n, &launch)) return nullptr;
  int count = static_cast<int>(PyTuple_GET_SIZE(tup));
  if (count < 1 || count > 3) return PyErr_Format(PyExc_ValueError, "1 to 3 tensors");
  PyObject** objs = &PyTuple_GET_ITEM(tup, 0);
  for (int k = 0; k < count; ++k)
    if (!read<ABI8>(objs[k])) return PyErr_Format(PyExc_ValueError, "tensor %d not a plain CUDA tensor", k);
  double ns = 0;
  switch (variant) {
#define CASE(V) case V: ns = loop<V>(objs, count, n, launch); break;
    CASE(NONE) CASE(BRIDGE) CASE(ABI8) CASE(ABI6) CASE(ABI5) CASE(ABI4) CASE(ABI3) CASE(ABI2)
    CASE(ABI1) CASE(EXCHANGE)
#undef CASE
    default: return PyErr_Format(PyExc_ValueError, "variant 0..%d", COUNT - 1);
  }
  return PyFloat_FromDouble(ns);
}

PyObject* names(PyObject*, PyObject*) {
  PyObject* l = PyList_New(COUNT);
  for (int i = 0; i < COUNT; ++i) PyList_SET_ITEM(l, i, PyUnicode_FromString(kNames[i]));
  return l;
}

PyMethodDef kMethods[] = {{"setup", setup, METH_VARARGS, nullptr},
                          {"run", run, METH_VARARGS, nullptr},
                          {"names", names, METH_NOARGS, nullptr},
                          {nullptr, nullptr, 0, nullptr}};

}  // namespace

#define PROBE_CONCAT2(a, b) a##b
#define PROBE_CONCAT(a, b) PROBE_CONCAT2(a, b)
#define PROBE_STR2(a) #a
#define PROBE_STR(a) PROBE_STR2(a)

static PyModuleDef module_def = {PyModuleDef_HEAD_INIT, PROBE_STR(TORCH_EXTENSION_NAME), nullptr, -1,
                                 kMethods, nullptr, nullptr, nullptr, nullptr};

PyMODINIT_FUNC PROBE_CONCAT(PyInit_, TORCH_EXTENSION_NAME)(void) { return PyModule_Create(&module_def); }
