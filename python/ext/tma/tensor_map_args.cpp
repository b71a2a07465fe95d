// Python arguments to TensorMap parameters; the torch path costs a handful of C-level calls.
#include "tma/tensor_map_args.h"

#include <nanobind/stl/string.h>

#include <array>
#include <optional>
#include <string>

#include "interop/dlpack_exchange.h"
#include "interop/dtype.h"
#include "interop/interop.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/tma/tma_dtype.h"
#include "nanocuda/tma/tma_names.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

[[noreturn]] void value_error(const std::string& text) { throw ValueError(text); }

std::string py_type_name(nb::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

CUtensorMapDataType tma_dtype(const DType& d, const char* where) {
  return tma_data_type(d.dl, d.name, where);
}

// torch dtype objects are process-lifetime singletons: remember their TMA type by address.
struct DtypeCache {
  std::array<PyObject*, 16> keys{};
  std::array<CUtensorMapDataType, 16> values{};
  std::size_t next = 0;
};
DtypeCache g_dtypes;

CUtensorMapDataType torch_dtype(PyObject* dt, const char* where) {
  for (std::size_t i = 0; i < g_dtypes.keys.size(); ++i)
    if (g_dtypes.keys[i] == dt) return g_dtypes.values[i];
  CUtensorMapDataType t = tma_dtype(parse_dtype(nb::handle(dt)), where);
  std::size_t slot = g_dtypes.next++ % g_dtypes.keys.size();
  Py_INCREF(dt);
  Py_XDECREF(g_dtypes.keys[slot]);
  g_dtypes.keys[slot] = dt;
  g_dtypes.values[slot] = t;
  return t;
}

nb::object call_method(nb::handle obj, PyObject* name) {
  PyObject* args[] = {obj.ptr()};
  PyObject* r = PyObject_VectorcallMethod(name, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  if (!r) throw nb::python_error();
  return nb::steal(r);
}

// The DLPack name of a dtype for the core's errors: the extension's table names it, or
// refuses a type it does not know ("unsupported DLPack dtype ...").
std::string dlpack_dtype_name(dlpack::DataType dl) { return dtype_from_dlpack(dl).name; }

TensorGeometry torch_geometry(nb::handle t, const char* where) {
  static PyObject* s_data_ptr = PyUnicode_InternFromString("data_ptr");
  static PyObject* s_get_device = PyUnicode_InternFromString("get_device");
  static PyObject* s_stride = PyUnicode_InternFromString("stride");
  static PyObject* s_dtype = PyUnicode_InternFromString("dtype");
  static PyObject* s_shape = PyUnicode_InternFromString("shape");
  long dev = PyLong_AsLong(call_method(t, s_get_device).ptr());
  if (dev < 0)
    value_error(std::string(where) + ": the tensor must be on a CUDA device, but the torch "
                "tensor lives on the CPU (move it to the GPU first)");
  const std::uint64_t ptr = PyLong_AsUnsignedLongLong(call_method(t, s_data_ptr).ptr());
  nb::object dt = nb::steal(PyObject_GetAttr(t.ptr(), s_dtype));
  if (!dt.is_valid()) throw nb::python_error();
  const CUtensorMapDataType dtype = torch_dtype(dt.ptr(), where);
  nb::object shape = nb::steal(PyObject_GetAttr(t.ptr(), s_shape));  // torch.Size: a tuple
  nb::object stride = call_method(t, s_stride);
  if (!shape.is_valid() || !PyTuple_Check(shape.ptr()) || !PyTuple_Check(stride.ptr()))
    throw nb::python_error();
  const Py_ssize_t r = PyTuple_GET_SIZE(shape.ptr());
  std::int64_t dims[kTensorMapMaxRank], strides[kTensorMapMaxRank];
  for (Py_ssize_t i = 0; i < r && i < kTensorMapMaxRank; ++i) {  // the core checks the rank
    dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape.ptr(), i));
    strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(stride.ptr(), i));
  }
  const dlpack::Tensor view{reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr)),
                            {dlpack::kCUDA, static_cast<std::int32_t>(dev)},
                            static_cast<std::int32_t>(r), {}, dims, strides, 0};
  return nanocuda::tensor_geometry(view, dtype, where);
}

// An enum option given as a name ("128B", case-insensitive) or its byte count (128); the
// spellings and the error's list of choices come from the core's table (tma_enums.inc).
int parse_choice(nb::handle h, TmaEnum kind, const char* what, const char* where) {
  std::optional<int> v;
  if (PyLong_Check(h.ptr())) {
    v = tma_enum_by_bytes(kind, PyLong_AsLong(h.ptr()));
  } else if (PyUnicode_Check(h.ptr())) {
    v = tma_enum_by_name(kind, nb::cast<std::string>(h));
  } else {
    throw TypeError(std::string(where) + ": " + what + " must be an int or a str, got " +
                    py_type_name(h));
  }
  if (!v)
    value_error(std::string(where) + ": " + what + " must be one of " + tma_enum_choices(kind) +
                ", got " + nb::cast<std::string>(nb::repr(h)));
  return *v;
}

}  // namespace

std::uint32_t sequence_rank(nb::handle seq, const char* what, const char* where) {
  Py_ssize_t n = PySequence_Size(seq.ptr());
  if (n < 0) {
    PyErr_Clear();
    throw TypeError(std::string(where) + ": " + what + " must be a sequence of ints, got " +
                    py_type_name(seq));
  }
  check_tensor_rank(n, where);
  return static_cast<std::uint32_t>(n);
}

template <class T>
static void read_ints(nb::handle seq, T* out, std::uint32_t rank, const char* what,
                      const char* where) {
  // Tuples (the usual spelling) are read in place; other sequences are converted once.
  nb::object fast = PyTuple_CheckExact(seq.ptr())
                        ? nb::borrow(seq)
                        : nb::steal(PySequence_Fast(seq.ptr(), "expected a sequence"));
  if (!fast.is_valid()) {
    PyErr_Clear();
    throw TypeError(std::string(where) + ": " + what + " must be a sequence of ints, got " +
                    py_type_name(seq));
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
  if (n != static_cast<Py_ssize_t>(rank))
    value_error(std::string(where) + ": " + what + " has " + std::to_string(n) +
                " entries, but the tensor has rank " + std::to_string(rank));
  PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
  for (Py_ssize_t i = 0; i < n; ++i) {
    long long v = PyLong_AsLongLong(items[i]);
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw TypeError(std::string(where) + ": " + what + "[" + std::to_string(i) +
                      "] must be an int, got " + py_type_name(items[i]));
    }
    if (v < 0)
      value_error(std::string(where) + ": " + what + "[" + std::to_string(i) + "] = " +
                  std::to_string(v) + " must not be negative");
    // Saturate: out-of-range values must still fail validation, not wrap into range.
    const auto u = static_cast<unsigned long long>(v);
    out[i] = u > static_cast<unsigned long long>(static_cast<T>(-1)) ? static_cast<T>(-1)
                                                                     : static_cast<T>(u);
  }
}

void read_dims(nb::handle seq, std::uint64_t* out, std::uint32_t rank, const char* what,
               const char* where) {
  read_ints(seq, out, rank, what, where);
}
void read_box(nb::handle seq, std::uint32_t* out, std::uint32_t rank, const char* what,
              const char* where) {
  read_ints(seq, out, rank, what, where);
}

// Producers with the DLPack C exchange API (recent torch): one C call gives everything.
bool exchange_geometry(nb::handle t, TensorGeometry& g, const char* where) {
  TensorViewReader read = exchange_reader(Py_TYPE(t.ptr()));
  if (!read) return false;
  dlpack::Tensor v;
  if (read(t.ptr(), &v) != 0) throw nb::python_error();
  g = nanocuda::tensor_geometry(v, where, Py_TYPE(t.ptr())->tp_name, dlpack_dtype_name);
  return true;
}

CUtensorMapDataType parse_tma_dtype_slow(nb::handle dtype, const char* where);

TensorGeometry tensor_geometry(nb::handle tensor, const char* where) {
  TensorGeometry g;
  if (exchange_geometry(tensor, g, where)) return g;
  if (is_torch_tensor(tensor)) return torch_geometry(tensor, where);
  ArrayView v = describe_array_geometry(tensor, where);
  const dlpack::Tensor view{reinterpret_cast<void*>(static_cast<std::uintptr_t>(v.ptr)),
                            {v.device_type, v.device_id},
                            static_cast<std::int32_t>(v.shape.size()),
                            v.dtype.dl,
                            v.shape.data(),
                            v.strides.data(),
                            0};
  return nanocuda::tensor_geometry(view, where, Py_TYPE(tensor.ptr())->tp_name, dlpack_dtype_name);
}

CUtensorMapDataType parse_tma_dtype(nb::handle dtype, const char* where) {
  if (PyLong_Check(dtype.ptr())) return static_cast<CUtensorMapDataType>(PyLong_AsLong(dtype.ptr()));
  // Names in user code are interned constants and dtypes are singletons: by address first.
  for (std::size_t i = 0; i < g_dtypes.keys.size(); ++i)
    if (g_dtypes.keys[i] == dtype.ptr()) return g_dtypes.values[i];
  CUtensorMapDataType t = parse_tma_dtype_slow(dtype, where);
  std::size_t slot = g_dtypes.next++ % g_dtypes.keys.size();
  Py_INCREF(dtype.ptr());
  Py_XDECREF(g_dtypes.keys[slot]);
  g_dtypes.keys[slot] = dtype.ptr();
  g_dtypes.values[slot] = t;
  return t;
}

CUtensorMapDataType parse_tma_dtype_slow(nb::handle dtype, const char* where) {
  if (PyUnicode_Check(dtype.ptr())) {
    // TMA-only types that have no numpy/torch name.
    std::optional<int> t = tma_enum_by_name(TmaEnum::DataType, nb::cast<std::string>(dtype));
    if (t && *t >= CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ) return static_cast<CUtensorMapDataType>(*t);
  }
  return tma_dtype(parse_dtype(dtype), where);
}

TensorMapOptions parse_options(nb::handle element_strides, nb::handle interleave,
                               nb::handle swizzle, nb::handle l2_promotion, nb::handle oob_fill,
                               std::uint32_t rank, const char* where) {
  TensorMapOptions o;
  if (!element_strides.is_none())
    read_box(element_strides, o.element_strides.data(), rank, "element_strides", where);
  if (!interleave.is_none())
    o.interleave = static_cast<CUtensorMapInterleave>(parse_choice(interleave, TmaEnum::Interleave, "interleave", where));
  if (!swizzle.is_none()) {
    int s = parse_choice(swizzle, TmaEnum::Swizzle, "swizzle", where);
    if (s != kTmaSwizzleAuto) o.swizzle = static_cast<CUtensorMapSwizzle>(s);
  }
  if (!l2_promotion.is_none())
    o.l2_promotion = static_cast<CUtensorMapL2promotion>(parse_choice(l2_promotion, TmaEnum::L2Promotion, "l2_promotion", where));
  if (!oob_fill.is_none())
    o.oob_fill = static_cast<CUtensorMapFloatOOBfill>(parse_choice(oob_fill, TmaEnum::OobFill, "oob_fill", where));
  return o;
}

}  // namespace nanocuda::py
