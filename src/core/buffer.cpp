// Stream-ordered device memory through a memory resource (the device's by default).
#include "nanocuda/core/buffer.h"

#include <cstdio>
#include <exception>
#include <string>
#include <utility>

#include "nanocuda/core/copy.h"
#include "nanocuda/core/memory_resource.h"
#include "nanocuda/core/peer_access.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

Buffer::Buffer(std::size_t size, StreamRef stream)
    : Buffer(MemoryResource::for_device(stream.device()), size, stream) {}

namespace {
// A zero-byte request still gets a unique, freeable address (1 byte), so ptr() is never 0
// for an open buffer.
CUdeviceptr allocate_from(MemoryResource* resource, std::size_t size, StreamRef stream) {
  if (!resource) throw ValueError("Buffer: the memory resource is None");
  return resource->allocate(size ? size : 1, stream);
}
}  // namespace

Buffer::Buffer(std::shared_ptr<MemoryResource> resource, std::size_t size, StreamRef stream)
    : size_(size), stream_(stream), resource_(std::move(resource)) {
  ptr_ = allocate_from(resource_.get(), size, stream);
}

void Buffer::forget() noexcept {
  if (ptr_ != 0) return;
  resource_.reset();
  stream_.release_stream();  // drops the Stream, if it held one
}

void Buffer::reallocate(std::shared_ptr<MemoryResource>&& resource, std::size_t size, StreamRef stream) {
  if (ptr_ != 0) [[unlikely]]
    throw ValueError("Buffer::reallocate", describe() + " is open");
  ptr_ = allocate_from(resource.get(), size, stream);
  size_ = size;
  stream_ = stream;
  resource_ = std::move(resource);
  owning_ = true;
}

Buffer::Buffer(CUdeviceptr ptr, std::size_t size, StreamRef stream,
               std::shared_ptr<MemoryResource> resource, bool owning) noexcept
    : ptr_(ptr), size_(size), stream_(stream), resource_(std::move(resource)), owning_(owning) {}

Buffer Buffer::adopt(CUdeviceptr ptr, std::size_t size, StreamRef stream,
                     std::shared_ptr<MemoryResource> resource) {
  if (ptr == 0) throw ValueError("Buffer::adopt", "the pointer is 0");
  bool owning = resource != nullptr;
  return Buffer(ptr, size, stream, std::move(resource), owning);
}

Buffer::Buffer(Buffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), size_(other.size_), stream_(other.stream_),
      resource_(std::move(other.resource_)), owning_(other.owning_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    free_on(stream_.is_closed() ? CU_STREAM_LEGACY : stream_.raw_handle());
    ptr_ = std::exchange(other.ptr_, 0);
    size_ = other.size_;
    stream_ = other.stream_;
    resource_ = std::move(other.resource_);
    owning_ = other.owning_;
  }
  return *this;
}

Buffer::~Buffer() {
  if (ptr_ == 0) return;  // closed or moved from: the common case, kept cheap
  free_on(stream_.is_closed() ? CU_STREAM_LEGACY : stream_.raw_handle());
}

CUdeviceptr Buffer::ptr() const {
  if (ptr_ == 0) [[unlikely]]
    throw ValueError(describe() + ": the buffer is closed");
  return ptr_;
}

CUdeviceptr Buffer::release() noexcept { return std::exchange(ptr_, 0); }

void Buffer::free_on(CUstream stream) noexcept {
  if (ptr_ == 0) return;
  CUdeviceptr ptr = std::exchange(ptr_, 0);
  if (!owning_) return;
  const auto* api = detail::loaded_driver();
  if (!api) return;
  if (resource_) {
    // A resource may be Python code or may throw; a destructor records, never throws.
    try {
      StreamRef order = stream == stream_.raw_handle() ? stream_.ref() : StreamRef::legacy(stream_.device());
      resource_->deallocate(ptr, size_, order);
    } catch (const Error& e) {
      detail::record_deferred_error(e.code(), e.call().c_str(), "Buffer (memory resource)");
    } catch (const std::exception& e) {
      if (resource_->report_failed_free(e, ptr, size_)) return;  // a Python resource's exception
      // Any other keeps its text: the next checked call reports which resource failed to
      // free what, and why.
      try {
        char at[64];
        std::snprintf(at, sizeof at, " bytes at 0x%llx: ", static_cast<unsigned long long>(ptr));
        detail::record_deferred_failure(CUDA_ERROR_UNKNOWN, "MemoryResource::deallocate",
                                        resource_->describe() + " failed to free " + std::to_string(size_) +
                                            at + e.what());
      } catch (...) {
        detail::record_deferred_error(CUDA_ERROR_UNKNOWN, "MemoryResource::deallocate", "Buffer");
      }
    } catch (...) {
      detail::record_deferred_error(CUDA_ERROR_UNKNOWN, "MemoryResource::deallocate", "Buffer");
    }
    return;
  }
  CUcontext previous = nullptr;
  api->cuCtxGetCurrent(&previous);
  bool switched = previous != stream_.context().handle();
  if (switched) api->cuCtxSetCurrent(stream_.context().handle());
  if (CUresult rc = api->cuMemFreeAsync(ptr, stream); rc != CUDA_SUCCESS)
    detail::record_deferred_error(rc, "cuMemFreeAsync", "Buffer");
  if (switched) api->cuCtxSetCurrent(previous);
}

void Buffer::set_deallocation_stream(StreamRef stream) {
  if (ptr_ == 0) throw ValueError("Buffer::set_deallocation_stream", describe() + " is closed");
  if (stream.is_closed())
    throw ValueError("Buffer::set_deallocation_stream", stream.describe() + " is closed");
  if (stream.device_ordinal() != stream_.device().ordinal())
    check_same_device("Buffer::set_deallocation_stream", "the stream", stream.device_ordinal(), "the buffer",
                      stream_.device().ordinal());
  stream_ = stream;
}

namespace {
// The one copy between two Buffers: the driver needs both contexts when the devices differ.
void copy_between(const Buffer& dst, const Buffer& src, std::size_t size, StreamRef stream) {
  if (dst.device().ordinal() != src.device().ordinal())
    copy_peer_async(dst.ptr(), dst.device(), src.ptr(), src.device(), size, stream);
  else
    copy_async(dst.ptr(), src.ptr(), size, stream);
}

void check_same_size(const Buffer& dst, const Buffer& src, const char* call) {
  if (dst.size() != src.size())
    throw ValueError(call, "the buffers differ in size (" + std::to_string(src.size()) + " bytes to " +
                               std::to_string(dst.size()) + ")");
}
}  // namespace

void Buffer::copy_from(const Buffer& src, StreamRef stream) {
  check_same_size(*this, src, "Buffer::copy_from");
  copy_between(*this, src, size_, stream);
}

void Buffer::copy_from(const Buffer& src, std::size_t size, StreamRef stream) {
  if (size > size_ || size > src.size())
    throw ValueError("Buffer::copy_from", "size " + std::to_string(size) + " is past the end of the " +
                                              (size > size_ ? "destination (" + std::to_string(size_)
                                                            : "source (" + std::to_string(src.size())) +
                                              " bytes)");
  copy_between(*this, src, size, stream);
}

void Buffer::copy_to(Buffer& dst, StreamRef stream) const {
  check_same_size(dst, *this, "Buffer::copy_to");
  copy_between(dst, *this, size_, stream);
}

void Buffer::close() {
  if (ptr_ == 0) return;
  StreamRef stream = stream_.ref();
  // A closed allocating stream was synchronized when it closed, so the legacy stream is a
  // safe place to free.
  free_in_order(stream.is_closed() ? StreamRef(CU_STREAM_LEGACY, stream_.device()) : stream);
}

void Buffer::close(StreamRef stream) {
  if (ptr_ == 0) return;
  // A stream the caller names must still exist: its handle may already be another stream's.
  if (stream.is_closed()) [[unlikely]]
    throw ValueError("Buffer::close", stream.describe() + ": the stream is closed; pass an open stream "
                     "or none (the allocating stream)");
  free_in_order(stream);
}

void Buffer::free_in_order(StreamRef order) {
  if (!owning_) {
    ptr_ = 0;
    return;
  }
  if (resource_) {
    CUdeviceptr ptr = ptr_;
    resource_->deallocate(ptr, size_, order);  // on failure the buffer stays open
    ptr_ = 0;
    return;
  }
  CurrentContext guard(stream_.context());
  NANOCUDA_CALL(cuMemFreeAsync, [&] { return describe(); }, ptr_, order.handle());
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
