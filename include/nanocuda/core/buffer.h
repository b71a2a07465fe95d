// Device memory from the device's stream-ordered pool (cuMemAllocAsync).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>

#include "nanocuda/core/stream.h"

namespace nanocuda {

// `size` bytes of device memory from cuMemAllocAsync on `stream`; freed (on that stream,
// in stream order) by close() or the destructor. Move-only. The Buffer keeps its stream
// alive, so freeing is always legal.
class Buffer {
 public:
  Buffer(std::size_t size, const Stream& stream);
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  [[nodiscard]] CUdeviceptr ptr() const;  // throws once closed
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] const Device& device() const noexcept { return stream_.device(); }
  [[nodiscard]] const Stream& stream() const noexcept { return stream_; }
  [[nodiscard]] bool is_closed() const noexcept { return ptr_ == 0; }
  // Frees the memory in the order of `stream` (default: the allocating stream).
  void close();
  void close(const Stream& stream);

  [[nodiscard]] std::string describe() const;

 private:
  void free_on(CUstream stream) noexcept;
  CUdeviceptr ptr_ = 0;
  std::size_t size_ = 0;
  Stream stream_;
};

}  // namespace nanocuda
