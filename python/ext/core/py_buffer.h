// The Python-side Buffer: a nanocuda::Buffer plus the dtype and shape it exports.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "interop/dtype.h"
#include "nanocuda/core/address_device.h"
#include "nanocuda/core/buffer.h"

namespace nanocuda::py {

// A shape whose first few dimensions live inline: the default 1-D shape of every allocated
// Buffer costs no heap allocation (it was one malloc/free per allocate+close pair).
class Shape {
 public:
  explicit Shape(int64_t n) : n_(1) { inline_[0] = n; }
  Shape(const std::vector<int64_t>& dims) : n_(dims.size()) {  // NOLINT: implicit, like the vector it replaced
    if (n_ > kInline) heap_ = dims;
    else for (std::size_t i = 0; i < n_; ++i) inline_[i] = dims[i];
  }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] const int64_t* data() const noexcept { return n_ > kInline ? heap_.data() : inline_; }
  [[nodiscard]] int64_t* data() noexcept { return n_ > kInline ? heap_.data() : inline_; }
  [[nodiscard]] const int64_t* begin() const noexcept { return data(); }
  [[nodiscard]] const int64_t* end() const noexcept { return data() + n_; }
  int64_t& operator[](std::size_t i) noexcept { return data()[i]; }
  int64_t operator[](std::size_t i) const noexcept { return data()[i]; }
  [[nodiscard]] std::vector<int64_t> vector() const { return {begin(), end()}; }
  // Back to the default 1-D shape {n}, for a shape held inline (a reused Buffer instance).
  void set_1d(int64_t n) noexcept { n_ = 1, inline_[0] = n; }

 private:
  static constexpr std::size_t kInline = 4;
  std::size_t n_;
  int64_t inline_[kInline] = {};
  std::vector<int64_t> heap_;  // only past kInline dimensions
};

struct PyBuffer {
  Buffer buffer;
  DType dtype;  // uint8 unless given
  Shape shape;  // {size} unless given
  // cuda.core's Buffer.owner: a Python object kept alive with the buffer (from_handle(owner=)).
  nanobind::object owner;
  // For from_handle without a resource: where the driver says the memory lives (unknown
  // otherwise, and then the resource, or device memory, answers).
  AddressInfo external;

  PyBuffer(Buffer b, DType d, Shape s, nanobind::object o = {})
      : buffer(std::move(b)), dtype(d), shape(std::move(s)), owner(std::move(o)) {}
  // Allocates from `mr` in place (uint8, 1-D): the allocate fast path.
  PyBuffer(std::shared_ptr<MemoryResource>&& mr, std::size_t size, StreamRef stream)
      : buffer(std::move(mr), size, stream), shape(static_cast<int64_t>(size)) {}
};

// cuda.core's answers for a buffer: its resource's, else the driver's for foreign memory,
// else device memory's. A Python resource whose device_id raises counts as host memory (-1).
int resource_device_id(const MemoryResource& mr);
bool buffer_device_accessible(const PyBuffer& b);
bool buffer_host_accessible(const PyBuffer& b);
int buffer_device_id(const PyBuffer& b);
// kDLCUDA (device only), kDLCPU (host only), kDLCUDAManaged or kDLCUDAHost (both); BufferError
// for memory neither can reach.
dlpack::Device dlpack_device_of(const PyBuffer& b);
// Buffer.fill's (pattern, width in bytes) from its value and width arguments.
std::pair<std::uint32_t, unsigned> fill_pattern(nanobind::handle value, nanobind::handle width);

// The same memory as an instance of `cls` (a Python subclass of Buffer); `buffer` gives it up
// and reads as closed. as_managed_buffer: into nanocuda.ManagedBuffer, once it is registered
// (_internal.set_managed_buffer_type), else `buffer` itself.
nanobind::object buffer_as(nanobind::handle cls, nanobind::handle buffer);
nanobind::object as_managed_buffer(nanobind::handle buffer);

// The DLPack capsule for __dlpack__ (max_version None or (major, minor): versioned from 1).
nanobind::object export_dlpack(nanobind::handle owner, void* data, dlpack::Device dev, const DType& dtype,
                               const Shape& shape, nanobind::handle max_version);
// The same for any strided memory (strides in elements; empty: compact), named `where` in errors.
nanobind::object export_dlpack_strided(nanobind::handle owner, void* data, dlpack::Device dev,
                                       const DType& dtype, std::vector<int64_t> shape,
                                       std::vector<int64_t> strides, nanobind::handle max_version,
                                       bool readonly, const char* where);

}  // namespace nanocuda::py
