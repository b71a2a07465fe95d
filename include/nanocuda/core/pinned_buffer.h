// Page-locked host memory, so host<->device copies are truly asynchronous.
#pragma once

#include <cstddef>
#include <memory>

#include "nanocuda/core/device.h"

namespace nanocuda {

// `size` bytes of page-locked host memory (cuMemHostAlloc, portable across contexts).
// Move-only; freed by close() or the destructor.
class PinnedBuffer {
 public:
  PinnedBuffer(std::size_t size, const Device& device);
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer();

  [[nodiscard]] void* ptr() const;
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool is_closed() const noexcept { return ptr_ == nullptr; }
  void close();

 private:
  void* ptr_ = nullptr;
  std::size_t size_ = 0;
  std::shared_ptr<Context> context_;
};

}  // namespace nanocuda
