// A stand-in for libtorch in test_torch_abi.py: a tensor type laid out like torch's THPVariable,
// its DLPack exchange function, and the aoti_torch_* C functions over the same objects.
// -DFAKE_MAYBE_OWNED: torch 2.3-2.9's layout (a flag word before the tensor handle);
// -DFAKE_NO_STRIDES: a libtorch without aoti_torch_get_strides. Like torch's TensorImpl, an
// Impl starts with its class word (a C++ vtable pointer there): plain, another dense class
// (Tensor(..., cls=1)), nested or non-strided.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  const char* cls;  // one of g_classes
  void* data;
  int64_t dim;
  int64_t sizes[4];
  int64_t strides[4];
  int32_t dtype, device_type, device_index, layout;
} Impl;

static const char g_classes[4] = {0};  // plain, other, nested, non-strided
static long g_layout_calls = 0, g_sizes_calls = 0;

typedef struct {
  PyObject_HEAD
#ifdef FAKE_MAYBE_OWNED
  int64_t is_borrowed;
#endif
  Impl* cdata;  // the "at::Tensor": one word, the impl's address; its address is the handle
  PyObject* hooks;
  Impl impl;
} Tensor;

static int g_exchange_lies = 0, g_cdata_lies = 0;
static long g_exchange_calls = 0;

#define IMPL(h) (*(Impl**)(h))
int32_t aoti_torch_get_data_ptr(void* h, void** out) { *out = IMPL(h)->data; return 0; }
int32_t aoti_torch_get_dim(void* h, int64_t* out) { *out = IMPL(h)->dim; return 0; }
// A negative first size marks a nested tensor: torch has data and a strided layout for it, but
// its sizes() throws, so the ABI call fails and the exchange function refuses it.
#define NESTED(m) ((m)->dim > 0 && (m)->sizes[0] < 0)
int32_t aoti_torch_get_sizes(void* h, int64_t** out) {
  ++g_sizes_calls;
  if (NESTED(IMPL(h))) return 1;
  *out = IMPL(h)->sizes;
  return 0;
}
#ifndef FAKE_NO_STRIDES
int32_t aoti_torch_get_strides(void* h, int64_t** out) { *out = IMPL(h)->strides; return 0; }
#endif
int32_t aoti_torch_get_dtype(void* h, int32_t* out) { *out = IMPL(h)->dtype; return 0; }
int32_t aoti_torch_get_device_type(void* h, int32_t* out) { *out = IMPL(h)->device_type; return 0; }
int32_t aoti_torch_get_device_index(void* h, int32_t* out) { *out = IMPL(h)->device_index; return 0; }
int32_t aoti_torch_get_layout(void* h, int32_t* out) {
  ++g_layout_calls;
  *out = IMPL(h)->layout;
  return 0;
}
int32_t aoti_torch_layout_strided(void) { return 0; }
int32_t aoti_torch_device_type_cpu(void) { return 0; }
int32_t aoti_torch_device_type_cuda(void) { return 1; }
// c10::ScalarType's numbering.
int32_t aoti_torch_dtype_uint8(void) { return 0; }
int32_t aoti_torch_dtype_int8(void) { return 1; }
int32_t aoti_torch_dtype_int16(void) { return 2; }
int32_t aoti_torch_dtype_int32(void) { return 3; }
int32_t aoti_torch_dtype_int64(void) { return 4; }
int32_t aoti_torch_dtype_float16(void) { return 5; }
int32_t aoti_torch_dtype_float32(void) { return 6; }
int32_t aoti_torch_dtype_float64(void) { return 7; }
int32_t aoti_torch_dtype_complex64(void) { return 9; }
int32_t aoti_torch_dtype_bool(void) { return 11; }
int32_t aoti_torch_dtype_bfloat16(void) { return 15; }

// DLPack structs (the public specification's layout).
typedef struct { int32_t device_type, device_id; } DLDevice;
typedef struct { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct {
  void* data; DLDevice device; int32_t ndim; DLDataType dtype;
  int64_t* shape; int64_t* strides; uint64_t byte_offset;
} DLTensor;
typedef struct Header { uint32_t major, minor; struct Header* prev_api; } Header;
typedef struct { Header header; void* f[3]; int (*from_py)(void*, DLTensor*); void* stream; } Api;

static int exchange(void* obj, DLTensor* out) {
  Impl* m = &((Tensor*)obj)->impl;
  static const DLDataType kTypes[16] = {
      [0] = {1, 8, 1}, [1] = {0, 8, 1}, [2] = {0, 16, 1}, [3] = {0, 32, 1}, [4] = {0, 64, 1},
      [5] = {2, 16, 1}, [6] = {2, 32, 1}, [7] = {2, 64, 1}, [9] = {5, 64, 1}, [11] = {6, 8, 1},
      [15] = {4, 16, 1}};
  ++g_exchange_calls;
  if (NESTED(m)) {
    PyErr_SetString(PyExc_BufferError, "fake_torch_abi: a nested tensor has no sizes");
    return -1;
  }
  if (m->layout != 0) {
    PyErr_SetString(PyExc_BufferError, "fake_torch_abi: a sparse tensor has no strides");
    return -1;
  }
  if (m->dtype < 0 || m->dtype >= 16 || !kTypes[m->dtype].bits) {
    PyErr_SetString(PyExc_BufferError, "fake_torch_abi: unsupported dtype");
    return -1;
  }
  out->data = (char*)m->data + (g_exchange_lies ? 8 : 0);
  out->device.device_type = m->device_type == 1 ? 2 : 1;
  out->device.device_id = m->device_type == 1 ? m->device_index : 0;
  out->ndim = (int32_t)m->dim;
  out->dtype = kTypes[m->dtype];
  out->shape = m->sizes;
  out->strides = m->strides;
  out->byte_offset = 0;
  return 0;
}

static Api g_api = {{1, 3, NULL}, {NULL, NULL, NULL}, exchange, NULL};

// Tensor(data, shape, strides, dtype, device_type=0, device_index=0, layout=0, cls=0)
static int tensor_init(PyObject* self, PyObject* args, PyObject* kw) {
  Tensor* t = (Tensor*)self;
  PyObject *shape, *strides;
  unsigned long long data;
  int dtype, device_type = 0, device_index = 0, layout = 0, cls = 0;
  (void)kw;
  if (!PyArg_ParseTuple(args, "KO!O!i|iiii", &data, &PyTuple_Type, &shape, &PyTuple_Type, &strides,
                        &dtype, &device_type, &device_index, &layout, &cls))
    return -1;
  Py_ssize_t n = PyTuple_GET_SIZE(shape);
  if (n > 4 || PyTuple_GET_SIZE(strides) != n) {
    PyErr_SetString(PyExc_ValueError, "fake_torch_abi.Tensor: up to 4 dims, one stride each");
    return -1;
  }
  memset(&t->impl, 0, sizeof t->impl);
  t->impl.data = (void*)(uintptr_t)data;
  t->impl.dim = n;
  for (Py_ssize_t i = 0; i < n; ++i) {
    t->impl.sizes[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    t->impl.strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i));
  }
  t->impl.dtype = dtype;
  t->impl.device_type = device_type;
  t->impl.device_index = device_index;
  t->impl.layout = layout;
  // As in torch, nested and non-strided tensors are impls of other classes.
  t->impl.cls = &g_classes[NESTED(&t->impl) ? 2 : layout != 0 ? 3 : cls != 0];
  t->cdata = &t->impl;
  return PyErr_Occurred() ? -1 : 0;
}

static PyObject* get_cdata(PyObject* self, void* unused) {
  (void)unused;
  return PyLong_FromVoidPtr((char*)((Tensor*)self)->cdata + (g_cdata_lies ? 16 : 0));
}

static PyGetSetDef tensor_getset[] = {{"_cdata", get_cdata, NULL, NULL, NULL}, {NULL}};

static PyTypeObject TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "fake_torch_abi.Tensor",
    .tp_basicsize = sizeof(Tensor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_init = tensor_init,
    .tp_new = PyType_GenericNew,
    .tp_getset = tensor_getset,
};

static PyObject* set_lies(PyObject* m, PyObject* args) {
  (void)m;
  if (!PyArg_ParseTuple(args, "ii", &g_exchange_lies, &g_cdata_lies)) return NULL;
  Py_RETURN_NONE;
}

static PyObject* exchange_calls(PyObject* m, PyObject* unused) {
  (void)m, (void)unused;
  return PyLong_FromLong(g_exchange_calls);
}

static PyObject* abi_calls(PyObject* m, PyObject* unused) {
  (void)m, (void)unused;
  return Py_BuildValue("{s:l,s:l}", "layout", g_layout_calls, "sizes", g_sizes_calls);
}

static PyMethodDef methods[] = {
    {"set_lies", set_lies, METH_VARARGS, "set_lies(exchange, cdata): make either answer wrong"},
    {"exchange_calls", exchange_calls, METH_NOARGS, "calls of the exchange function so far"},
    {"abi_calls", abi_calls, METH_NOARGS, "calls of aoti_torch_get_layout / _sizes so far"},
    {NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "fake_torch_abi", NULL, -1, methods};

PyMODINIT_FUNC PyInit_fake_torch_abi(void) {
  if (PyType_Ready(&TensorType) < 0) return NULL;
  PyObject* capsule = PyCapsule_New(&g_api, "dlpack_exchange_api", NULL);
  if (!capsule || PyDict_SetItemString(TensorType.tp_dict, "__dlpack_c_exchange_api__", capsule) < 0)
    return NULL;
  Py_DECREF(capsule);
  PyType_Modified(&TensorType);
  PyObject* m = PyModule_Create(&module);
  if (!m) return NULL;
  Py_INCREF(&TensorType);
  if (PyModule_AddObject(m, "Tensor", (PyObject*)&TensorType) < 0) return NULL;
  return m;
}
