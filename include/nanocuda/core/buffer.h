// Device memory through a memory resource: the device's (MemoryResource::for_device) or a given one.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>

#include "nanocuda/core/memory_resource.h"
#include "nanocuda/core/kept_stream.h"

namespace nanocuda {

// `size` bytes of device memory; freed (on its stream, in stream order) by close() or the
// destructor. Move-only. The Buffer keeps its stream alive, so freeing is always legal, and
// keeps its resource alive, so the memory always has somewhere to go back to.
class Buffer {
 public:
  // From the stream's device's memory resource (MemoryResource::for_device: the one
  // set_for_device gave, else the device's current pool), as Python's Buffer(size) and
  // Device.allocate: the same constructor means the same thing in both languages.
  Buffer(std::size_t size, StreamRef stream);
  // From `resource`, which also frees it.
  Buffer(std::shared_ptr<MemoryResource> resource, std::size_t size, StreamRef stream);
  // Adopts `ptr`: freed through `resource` at close(), or never when `resource` is null (a
  // view of memory someone else owns).
  [[nodiscard]] static Buffer adopt(CUdeviceptr ptr, std::size_t size, StreamRef stream,
                                    std::shared_ptr<MemoryResource> resource);
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  [[nodiscard]] CUdeviceptr ptr() const;  // throws once closed
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] const Device& device() const noexcept { return stream_.device(); }
  [[nodiscard]] StreamRef stream() const noexcept { return stream_.ref(); }
  [[nodiscard]] bool is_closed() const noexcept { return ptr_ == 0; }
  // The resource that frees it; null for views.
  [[nodiscard]] const std::shared_ptr<MemoryResource>& memory_resource() const noexcept { return resource_; }
  [[nodiscard]] bool is_owning() const noexcept { return owning_; }
  // Its resource's answers; false without a resource (views).
  [[nodiscard]] bool is_managed() const { return resource_ && resource_->is_managed(); }
  [[nodiscard]] bool is_mapped() const { return resource_ && resource_->is_mapped(); }
  // Frees it, at close() without a stream or at destruction, in the order of `stream`
  // instead of the allocating stream (cuda.core's set_deallocation_stream). Does not order
  // `stream` after any work: the caller does. ValueError when closed, when `stream` is
  // closed or belongs to another device.
  void set_deallocation_stream(StreamRef stream);
  // Copies all of `src` into this buffer in the order of `stream` (default: this buffer's
  // stream, as cuda.core); ValueError unless both hold the same number of bytes. Between
  // buffers of two devices it is a peer copy (cuMemcpyPeerAsync), else cuMemcpyAsync.
  void copy_from(const Buffer& src, StreamRef stream);
  void copy_from(const Buffer& src) { copy_from(src, stream()); }
  // The first `size` bytes of `src` over this buffer's first `size` bytes, chosen the same
  // way; ValueError when `size` is past the end of either.
  void copy_from(const Buffer& src, std::size_t size, StreamRef stream);
  // The copy the other way: all of this buffer into `dst` (default stream: dst's).
  void copy_to(Buffer& dst, StreamRef stream) const;
  void copy_to(Buffer& dst) const { copy_to(dst, dst.stream()); }
  // Frees the memory in the order of `stream` (default: the allocating stream, or the legacy
  // stream once that one is closed); ValueError when a `stream` given is closed.
  void close();
  void close(StreamRef stream);
  // Gives up the memory without freeing it; the Buffer reads as closed.
  [[nodiscard]] CUdeviceptr release() noexcept;
  // For a pool of closed Buffer objects (the Python free list): forget() drops a closed
  // Buffer's stream and resource, so it keeps neither alive (then only reallocate() and the
  // destructor may use it); reallocate() allocates into a closed Buffer as the (resource,
  // size, stream) constructor does (on failure it stays closed). No-op / ValueError if open.
  void forget() noexcept;
  void reallocate(std::shared_ptr<MemoryResource>&& resource, std::size_t size, StreamRef stream);

  [[nodiscard]] std::string describe() const;

 private:
  friend class VirtualMemoryResource;  // grows buffers in place
  Buffer(CUdeviceptr ptr, std::size_t size, StreamRef stream,
         std::shared_ptr<MemoryResource> resource, bool owning) noexcept;
  void free_on(CUstream stream) noexcept;
  void free_in_order(StreamRef order);  // close()'s free, once the stream is chosen
  CUdeviceptr ptr_ = 0;
  std::size_t size_ = 0;
  KeptStream stream_;  // keeps a nanocuda Stream alive until the memory is freed on it
  std::shared_ptr<MemoryResource> resource_;
  bool owning_ = true;
};

}  // namespace nanocuda
