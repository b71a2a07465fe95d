// nanocuda's one strided-array model: element types (one table, names included) and ArrayView.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "nanocuda/core/dlpack.h"

namespace nanocuda {

// One element type: its DLPack code, the name numpy gives it, its array-interface typestr.
struct DType {
  dlpack::DataType dl{dlpack::kUInt, 8, 1};
  const char* name = "uint8";   // canonical name, as numpy / ml_dtypes spell it
  const char* typestr = "|u1";  // __cuda_array_interface__ / __array_interface__ typestr
  [[nodiscard]] int itemsize() const { return dl.bits / 8; }
};

// Every element type nanocuda knows, in one table (bool, (u)int8-64, float16/32/64, bfloat16,
// complex64/128, float8).
[[nodiscard]] std::span<const DType> dtype_table() noexcept;
// The type named `name` (canonical or an alias: "f4", "float", "half", "bf16"...); nullptr if none.
[[nodiscard]] const DType* find_dtype(std::string_view name) noexcept;
// The type of a DLPack data type (one lane); nullptr if nanocuda does not know it.
[[nodiscard]] const DType* find_dtype(dlpack::DataType dl) noexcept;
// The type of an array-interface typestr ("<f4", "|b1"; any byte-order mark); nullptr if none.
[[nodiscard]] const DType* find_dtype_typestr(std::string_view typestr) noexcept;
// "bool, (u)int8-64, ...": what find_dtype accepts, for error messages.
[[nodiscard]] const char* known_dtypes() noexcept;

// C-contiguity as torch defines it: dimensions of size 1 impose no stride, and an empty array
// (any size-0 dimension) is contiguous whatever its strides. `strides` in elements; nullptr
// means compact (contiguous). Inline and allocation-free: the Launcher calls it per argument.
[[nodiscard]] inline bool is_contiguous(int ndim, const std::int64_t* shape,
                                        const std::int64_t* strides) noexcept {
  if (!strides) return true;
  for (int d = 0; d < ndim; ++d)
    if (shape[d] == 0) return true;
  std::int64_t expected = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

// What an array says about its memory: where it lives, its element type and geometry.
struct ArrayView {
  std::uint64_t ptr = 0;                 // address of element [0, 0, ...]
  std::int32_t device_type = dlpack::kCUDA;  // DLPack device kind (kCPU, kCUDA, kCUDAHost, kCUDAManaged)
  std::int32_t device_id = 0;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // in elements, always filled (compact when the producer said none)
  bool readonly = false;              // the producer marked the memory read-only

  [[nodiscard]] int ndim() const { return static_cast<int>(shape.size()); }
  [[nodiscard]] std::int64_t numel() const;
  [[nodiscard]] std::uint64_t nbytes() const {
    return static_cast<std::uint64_t>(numel()) * static_cast<std::uint64_t>(dtype.itemsize());
  }
  // Bytes from the lowest to one past the highest element address (0 when empty): what a
  // copy touches; equal to nbytes() for a contiguous array.
  [[nodiscard]] std::uint64_t extent_bytes() const;
  [[nodiscard]] bool is_contiguous() const {
    return nanocuda::is_contiguous(ndim(), shape.data(), strides.data());
  }
  [[nodiscard]] bool on_cuda() const {
    return device_type == dlpack::kCUDA || device_type == dlpack::kCUDAManaged;
  }
};

// Row-major strides (in elements) of `shape`: what "no strides" means.
[[nodiscard]] std::vector<std::int64_t> compact_strides(std::span<const std::int64_t> shape);

}  // namespace nanocuda
