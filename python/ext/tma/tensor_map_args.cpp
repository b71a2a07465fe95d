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
#include "fastpath/torch_tensor.h"
#include "fastpath/type_cache.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

[[noreturn]] void value_error(const std::string& text) { throw ValueError(text); }

std::string py_type_name(nb::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

CUtensorMapDataType tma_dtype(const DType& d, const char* where) {
  return tma_data_type(d.dl, d.name, where);
}

// torch dtype objects are process-lifetime singletons: remember their TMA type by address.
TypeCache<CUtensorMapDataType, 16> g_dtypes;

CUtensorMapDataType torch_dtype(PyObject* dt, const char* where) {
  if (const CUtensorMapDataType* t = g_dtypes.find(dt)) return *t;
  return g_dtypes.put(dt, tma_dtype(parse_dtype(nb::handle(dt)), where));
}

TensorGeometry torch_geometry(nb::handle t, const char* where) {
  long dev = torch::device(t.ptr());
  if (dev < 0)
    value_error(std::string(where) + ": the tensor must be on a CUDA device, but the torch "
                "tensor lives on the CPU (move it to the GPU first)");
  const std::uint64_t ptr = torch::data_ptr(t.ptr());
  const CUtensorMapDataType dtype = torch_dtype(torch::dtype(t.ptr()).ptr(), where);
  nb::tuple shape = torch::shape(t.ptr());  // torch.Size: a tuple
  nb::tuple stride = torch::stride(t.ptr());
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
  g = nanocuda::tensor_geometry(v, where, Py_TYPE(t.ptr())->tp_name);
  return true;
}

CUtensorMapDataType parse_tma_dtype_slow(nb::handle dtype, const char* where);

TensorGeometry tensor_geometry(nb::handle tensor, const char* where) {
  TensorGeometry g;
  if (exchange_geometry(tensor, g, where)) return g;
  if (is_torch_tensor(tensor)) return torch_geometry(tensor, where);
  return nanocuda::tensor_geometry(describe_array_geometry(tensor, where), where,
                                   Py_TYPE(tensor.ptr())->tp_name);
}

CUtensorMapDataType parse_tma_dtype(nb::handle dtype, const char* where) {
  if (PyLong_Check(dtype.ptr())) return static_cast<CUtensorMapDataType>(PyLong_AsLong(dtype.ptr()));
  // Names in user code are interned constants and dtypes are singletons: by address first.
  if (const CUtensorMapDataType* t = g_dtypes.find(dtype.ptr())) return *t;
  return g_dtypes.put(dtype.ptr(), parse_tma_dtype_slow(dtype, where));
}

CUtensorMapDataType parse_tma_dtype_slow(nb::handle dtype, const char* where) {
  if (PyUnicode_Check(dtype.ptr())) {
    // TMA's own names (cuda.core's TensorMapDataType.FLOAT32 arrives as "FLOAT32"), TMA-only
    // types among them; other names go through the element-type table.
    std::optional<int> t = tma_enum_by_name(TmaEnum::DataType, nb::cast<std::string>(dtype));
    if (t) return static_cast<CUtensorMapDataType>(*t);
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
