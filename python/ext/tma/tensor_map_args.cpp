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
#include "toolkit/torch_tensor.h"
#include "toolkit/type_cache.h"

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

void check_rank(std::size_t rank, const char* where) {
  if (rank < 1 || rank > kTensorMapMaxRank)
    value_error(std::string(where) + ": rank must be 1..5, got " + std::to_string(rank) +
                " (the tensor's number of dimensions)");
}

// Row-major element strides to bytes, checking the innermost dimension is contiguous. A
// size-1 dimension's stride never affects addressing, so it gets a 16-byte-multiple value
// that passes the driver's stride rules whatever the producer reported.
void finish(TensorGeometry& g, const std::int64_t* strides, int itemsize, const char* where) {
  const std::uint32_t r = g.rank;
  if (g.shape[r - 1] != 1 && strides[r - 1] != 1)
    value_error(std::string(where) + ": the innermost dimension must be contiguous (stride 1), "
                "but the tensor's innermost stride is " + std::to_string(strides[r - 1]) +
                " elements; make it contiguous first");
  g.strides[r - 1] = static_cast<std::uint64_t>(itemsize);
  for (std::uint32_t i = r - 1; i-- > 0;) {
    if (g.shape[i] == 1) {
      g.strides[i] = (g.strides[i + 1] * g.shape[i + 1] + 15) / 16 * 16;
      continue;
    }
    if (strides[i] < 0)
      value_error(std::string(where) + ": negative strides are not supported by TMA (stride " +
                  std::to_string(strides[i]) + " in dimension " + std::to_string(i) + ")");
    g.strides[i] = static_cast<std::uint64_t>(strides[i]) * static_cast<std::uint64_t>(itemsize);
  }
}

void torch_geometry(nb::handle t, TensorGeometry& g, const char* where) {
  long dev = torch::device(t.ptr());
  if (dev < 0)
    value_error(std::string(where) + ": the tensor must be on a CUDA device, but the torch "
                "tensor lives on the CPU (move it to the GPU first)");
  g.ptr = torch::data_ptr(t.ptr());
  g.dtype = torch_dtype(torch::dtype(t.ptr()).ptr(), where);
  nb::tuple shape = torch::shape(t.ptr());
  nb::tuple stride = torch::stride(t.ptr());
  const Py_ssize_t r = PyTuple_GET_SIZE(shape.ptr());
  check_rank(static_cast<std::size_t>(r), where);
  g.rank = static_cast<std::uint32_t>(r);
  std::int64_t strides[kTensorMapMaxRank];
  for (Py_ssize_t i = 0; i < r; ++i) {
    g.shape[i] = static_cast<std::uint64_t>(PyLong_AsLongLong(PyTuple_GET_ITEM(shape.ptr(), i)));
    strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(stride.ptr(), i));
  }
  finish(g, strides, tensor_map_element_bits(g.dtype) / 8, where);
}

const char* where_it_lives(int32_t device_type) {
  switch (device_type) {
    case dlpack::kCPU: return "on the CPU";
    case dlpack::kCUDAHost: return "in pinned host memory";
    default: return "on a non-CUDA device";
  }
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
  check_rank(static_cast<std::size_t>(n), where);
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
  if (v.device.device_type != dlpack::kCUDA && v.device.device_type != dlpack::kCUDAManaged)
    value_error(std::string(where) + ": the tensor must be on a CUDA device, but the " +
                py_type_name(t) + " lives " + where_it_lives(v.device.device_type) +
                " (move it to the GPU first)");
  g.ptr = reinterpret_cast<std::uint64_t>(v.data) + v.byte_offset;
  g.dtype = tma_dtype(dtype_from_dlpack(v.dtype), where);
  check_rank(static_cast<std::size_t>(v.ndim), where);
  g.rank = static_cast<std::uint32_t>(v.ndim);
  std::int64_t compact[kTensorMapMaxRank];
  std::int64_t step = 1;
  for (std::uint32_t i = g.rank; i-- > 0;) {
    g.shape[i] = static_cast<std::uint64_t>(v.shape[i]);
    compact[i] = step;
    step *= v.shape[i];
  }
  finish(g, v.strides ? v.strides : compact, v.dtype.bits / 8, where);
  return true;
}

CUtensorMapDataType parse_tma_dtype_slow(nb::handle dtype, const char* where);

TensorGeometry tensor_geometry(nb::handle tensor, const char* where) {
  TensorGeometry g;
  if (exchange_geometry(tensor, g, where)) return g;
  if (is_torch_tensor(tensor)) {
    torch_geometry(tensor, g, where);
    return g;
  }
  ArrayView v = describe_array_geometry(tensor, where);
  if (!v.on_cuda())
    value_error(std::string(where) + ": the tensor must be on a CUDA device, but the " +
                py_type_name(tensor) + " lives " + where_it_lives(v.device_type) +
                " (move it to the GPU first)");
  g.ptr = v.ptr;
  g.dtype = tma_dtype(v.dtype, where);
  check_rank(v.shape.size(), where);
  g.rank = static_cast<std::uint32_t>(v.shape.size());
  for (std::uint32_t i = 0; i < g.rank; ++i) g.shape[i] = static_cast<std::uint64_t>(v.shape[i]);
  finish(g, v.strides.data(), v.dtype.itemsize(), where);
  return g;
}

CUtensorMapDataType parse_tma_dtype(nb::handle dtype, const char* where) {
  if (PyLong_Check(dtype.ptr())) return static_cast<CUtensorMapDataType>(PyLong_AsLong(dtype.ptr()));
  // Names in user code are interned constants and dtypes are singletons: by address first.
  if (const CUtensorMapDataType* t = g_dtypes.find(dtype.ptr())) return *t;
  return g_dtypes.put(dtype.ptr(), parse_tma_dtype_slow(dtype, where));
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
