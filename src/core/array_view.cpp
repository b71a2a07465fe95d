// The element-type table and ArrayView's geometry: the one copy every nanocuda layer reads.
#include "nanocuda/core/array_view.h"

#include <algorithm>
#include <iterator>

namespace nanocuda {

namespace {

// Typestrs carry numpy's byte-order mark for little-endian machines; lookups ignore it.
constexpr DType kTable[] = {
    {{dlpack::kBool, 8, 1}, "bool", "|b1"},
    {{dlpack::kInt, 8, 1}, "int8", "|i1"},
    {{dlpack::kUInt, 8, 1}, "uint8", "|u1"},
    {{dlpack::kInt, 16, 1}, "int16", "<i2"},
    {{dlpack::kUInt, 16, 1}, "uint16", "<u2"},
    {{dlpack::kInt, 32, 1}, "int32", "<i4"},
    {{dlpack::kUInt, 32, 1}, "uint32", "<u4"},
    {{dlpack::kInt, 64, 1}, "int64", "<i8"},
    {{dlpack::kUInt, 64, 1}, "uint64", "<u8"},
    {{dlpack::kFloat, 16, 1}, "float16", "<f2"},
    {{dlpack::kBfloat, 16, 1}, "bfloat16", "<V2"},
    {{dlpack::kFloat, 32, 1}, "float32", "<f4"},
    {{dlpack::kFloat, 64, 1}, "float64", "<f8"},
    {{dlpack::kComplex, 64, 1}, "complex64", "<c8"},
    {{dlpack::kComplex, 128, 1}, "complex128", "<c16"},
    {{dlpack::kFloat8_e4m3fn, 8, 1}, "float8_e4m3fn", "|V1"},
    {{dlpack::kFloat8_e5m2, 8, 1}, "float8_e5m2", "|V1"},
};

// Other spellings of kTable[i] (numpy short codes, C names).
constexpr const char* kAliases[][4] = {
    {"bool_", "?", "b1", nullptr}, {"i1", "char", "b", nullptr},  {"u1", "byte", "B", nullptr},
    {"i2", "short", "h", nullptr}, {"u2", "H", nullptr, nullptr}, {"i4", "int", "i", nullptr},
    {"u4", "I", nullptr, nullptr}, {"i8", "long", "q", nullptr},  {"u8", "Q", nullptr, nullptr},
    {"f2", "half", "e", nullptr},  {"bf16", nullptr, nullptr, nullptr}, {"f4", "float", "f", nullptr},
    {"f8", "double", "d", nullptr}, {"c8", "cfloat", "F", nullptr}, {"c16", "cdouble", "D", nullptr},
    {nullptr, nullptr, nullptr, nullptr}, {nullptr, nullptr, nullptr, nullptr},
};
static_assert(std::size(kAliases) == std::size(kTable));

}  // namespace

std::span<const DType> dtype_table() noexcept { return kTable; }

const DType* find_dtype(std::string_view name) noexcept {
  for (std::size_t i = 0; i < std::size(kTable); ++i) {
    if (name == kTable[i].name) return &kTable[i];
    for (const char* alias : kAliases[i])
      if (alias && name == alias) return &kTable[i];
  }
  return nullptr;
}

const DType* find_dtype(dlpack::DataType dl) noexcept {
  if (dl.lanes != 1) return nullptr;
  for (const DType& t : kTable)
    if (t.dl.code == dl.code && t.dl.bits == dl.bits) return &t;
  return nullptr;
}

const DType* find_dtype_typestr(std::string_view typestr) noexcept {
  // "V" typestrs (bfloat16, float8, structs) are ambiguous: only a DLPack code names them.
  if (typestr.size() < 2 || typestr[1] == 'V') return nullptr;
  for (const DType& t : kTable)
    if (typestr.substr(1) == std::string_view(t.typestr).substr(1))
      // big-endian multi-byte data is not what the table describes
      return typestr[0] == '>' && t.itemsize() > 1 ? nullptr : &t;
  return nullptr;
}

const char* known_dtypes() noexcept {
  return "bool, (u)int8-64, float16, bfloat16, float32, float64, complex64/128 and float8";
}

std::int64_t ArrayView::numel() const {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

std::uint64_t ArrayView::extent_bytes() const {
  if (numel() == 0) return 0;
  std::int64_t lo = 0, hi = 0;  // element offsets of the lowest and highest element
  for (std::size_t d = 0; d < shape.size(); ++d) {
    std::int64_t reach = (shape[d] - 1) * strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  return static_cast<std::uint64_t>(hi - lo + 1) * static_cast<std::uint64_t>(dtype.itemsize());
}

std::vector<std::int64_t> compact_strides(std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= std::max<std::int64_t>(shape[i], 1);  // as torch: an empty dimension steps by 1
  }
  return strides;
}

}  // namespace nanocuda
