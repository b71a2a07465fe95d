// Stream-ordered device memory.
#include "nanocuda/core/buffer.h"

#include <cstdio>
#include <utility>

#include "nanocuda/driver/check.h"

namespace nanocuda {

Buffer::Buffer(std::size_t size, const Stream& stream) : size_(size), stream_(stream) {
  CurrentContext guard(stream.context());
  // A zero-byte request still gets a unique, freeable address (1 byte), so ptr() is
  // never 0 for an open buffer.
  NANOCUDA_CALL(cuMemAllocAsync,
                [&] { return "Buffer(" + std::to_string(size) + " bytes) on " + stream.describe(); },
                &ptr_, size ? size : 1, stream.handle());
}

Buffer::Buffer(Buffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), size_(other.size_), stream_(other.stream_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    free_on(stream_.is_closed() ? CU_STREAM_LEGACY : stream_.raw_handle());
    ptr_ = std::exchange(other.ptr_, 0);
    size_ = other.size_;
    stream_ = other.stream_;
  }
  return *this;
}

Buffer::~Buffer() { free_on(stream_.is_closed() ? CU_STREAM_LEGACY : stream_.raw_handle()); }

CUdeviceptr Buffer::ptr() const {
  if (ptr_ == 0) [[unlikely]]
    throw ValueError(describe() + ": the buffer is closed");
  return ptr_;
}

void Buffer::free_on(CUstream stream) noexcept {
  if (ptr_ == 0) return;
  const auto* api = detail::loaded_driver();
  if (!api) return;
  CUcontext previous = nullptr;
  api->cuCtxGetCurrent(&previous);
  bool switched = previous != stream_.context().handle();
  if (switched) api->cuCtxSetCurrent(stream_.context().handle());
  if (CUresult rc = api->cuMemFreeAsync(ptr_, stream); rc != CUDA_SUCCESS)
    detail::record_deferred_error(rc, "cuMemFreeAsync", "Buffer");
  if (switched) api->cuCtxSetCurrent(previous);
  ptr_ = 0;
}

void Buffer::close() { close(stream_); }

void Buffer::close(const Stream& stream) {
  if (ptr_ == 0) return;
  CurrentContext guard(stream_.context());
  // A closed allocating stream was synchronized when it closed, so the legacy stream is a
  // safe place to free.
  CUstream order = stream.is_closed() ? CU_STREAM_LEGACY : stream.handle();
  NANOCUDA_CALL(cuMemFreeAsync, [&] { return describe(); }, ptr_, order);
  ptr_ = 0;
}

std::string Buffer::describe() const {
  char text[128];
  std::snprintf(text, sizeof text, "Buffer(%zu bytes at 0x%llx%s) on device %d", size_,
                static_cast<unsigned long long>(ptr_), ptr_ ? "" : ", closed",
                stream_.device().ordinal());
  return text;
}

}  // namespace nanocuda
