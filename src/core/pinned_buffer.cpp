// Page-locked host memory.
#include "nanocuda/core/pinned_buffer.h"

#include <string>
#include <utility>

#include "device_wait.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

PinnedBuffer::PinnedBuffer(std::size_t size, const Device& device)
    : size_(size), context_(device.context()) {
  CurrentContext guard(*context_);
  NANOCUDA_CALL(cuMemHostAlloc, [&] { return "PinnedBuffer(" + std::to_string(size) + " bytes)"; },
                &ptr_, size ? size : 1, CU_MEMHOSTALLOC_PORTABLE);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), size_(other.size_), context_(other.context_) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    this->~PinnedBuffer();
    ptr_ = std::exchange(other.ptr_, nullptr);
    size_ = other.size_;
    context_ = other.context_;
  }
  return *this;
}

PinnedBuffer::~PinnedBuffer() {
  if (!ptr_) return;
  if (const auto* api = detail::loaded_driver()) {
    detail::DeviceWait wait;  // cuMemFreeHost waits for the device's work
    if (CUresult rc = api->cuMemFreeHost(ptr_); rc != CUDA_SUCCESS)
      detail::record_deferred_error(rc, "cuMemFreeHost", "PinnedBuffer");
  }
  ptr_ = nullptr;
}

void* PinnedBuffer::ptr() const {
  if (!ptr_) throw ValueError("PinnedBuffer(" + std::to_string(size_) + " bytes): closed");
  return ptr_;
}

void PinnedBuffer::close() {
  if (!ptr_) return;
  detail::DeviceWait wait;  // cuMemFreeHost waits for the device's work
  NANOCUDA_CALL(cuMemFreeHost, [&] { return "PinnedBuffer(" + std::to_string(size_) + " bytes)"; },
                ptr_);
  ptr_ = nullptr;
}

}  // namespace nanocuda
