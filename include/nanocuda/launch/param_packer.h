// Writes launch arguments into one aligned parameter buffer, checked against the kernel's
// real parameter layout; every mismatch names the kernel, the parameter, and both sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "nanocuda/compile/param_layout.h"

namespace nanocuda {

// The packer writes into caller-owned storage (no allocation); `params()` gives the
// void** array cuLaunchKernel wants, pointing into that storage.
class ParamPacker {
 public:
  // Largest parameter buffer a kernel may have (CUDA 12.1+ on Volta and later).
  static constexpr std::size_t kMaxParamBytes = 32764;

  // `storage` must hold layout.total_size() bytes, 16-byte aligned; `pointers` must hold
  // layout.count() entries. `kernel_name` is used in errors.
  ParamPacker(const ParamLayout& layout, std::string_view kernel_name, unsigned char* storage,
              void** pointers) noexcept;

  // Throws TypeError when `given` differs from the kernel's parameter count.
  void check_count(std::size_t given) const;

  // An integer written at the parameter's size (1, 2, 4 or 8 bytes), range-checked for
  // that size (signed or unsigned interpretation both accepted).
  void write_int(std::size_t index, std::int64_t value) {
    // The launch hot path: pointers and 64-bit ints, and in-range 32-bit ints, inline.
    const std::uint32_t size = size_of(index);
    if (size == 8) {
      std::memcpy(slot(index), &value, 8);
      return;
    }
    if (size == 4 && value >= -2147483648ll && value <= 4294967295ll) {
      const auto v = static_cast<std::uint32_t>(value);
      std::memcpy(slot(index), &v, 4);
      return;
    }
    write_int_checked(index, value);
  }
  void write_uint(std::size_t index, std::uint64_t value);
  // A float: float32 into a 4-byte parameter, float64 into an 8-byte one.
  void write_float(std::size_t index, double value) {
    const std::uint32_t size = size_of(index);
    if (size == 4) {
      const auto f = static_cast<float>(value);
      std::memcpy(slot(index), &f, 4);
    } else if (size == 8) {
      std::memcpy(slot(index), &value, 8);
    } else {
      size_mismatch(index, 8, "float");
    }
  }
  // A bool: one byte.
  void write_bool(std::size_t index, bool value);
  // A device address: the parameter must be 8 bytes.
  void write_pointer(std::size_t index, std::uint64_t address) {
    if (size_of(index) != 8) size_mismatch(index, 8, "device pointer");
    std::memcpy(slot(index), &address, 8);
  }
  // Exact bytes (numpy/ctypes scalars, structs, TensorMaps): the size must match exactly.
  void write_bytes(std::size_t index, const void* data, std::size_t size, const char* what);

  [[nodiscard]] std::uint32_t size_of(std::size_t index) const noexcept {
    return params_[index].size;
  }
  [[nodiscard]] void** params() const noexcept { return pointers_; }
  [[nodiscard]] const ParamLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] std::string_view kernel_name() const noexcept { return kernel_name_; }

  // Every size, with the range checks and errors (write_int's out-of-line part).
  void write_int_checked(std::size_t index, std::int64_t value);

  // Throws ValueError: "kernel 'k', parameter 2: expects 4 bytes, got 8 bytes (float64)".
  [[noreturn]] void size_mismatch(std::size_t index, std::size_t given, const char* what) const;

 private:
  [[nodiscard]] unsigned char* slot(std::size_t index) const noexcept {
    return storage_ + params_[index].offset;
  }
  const ParamLayout& layout_;
  const ParamInfo* params_;  // layout_.params.data(): one load less per argument
  std::string_view kernel_name_;
  unsigned char* storage_;
  void** pointers_;
};

}  // namespace nanocuda
