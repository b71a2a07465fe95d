// The memory-resource interface: where a Buffer's memory comes from and how it goes back.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include "nanocuda/core/stream_ref.h"

namespace nanocuda {

class Device;

// A source of memory. Buffers made through a resource hold it (shared_ptr) and give their
// memory back through deallocate(), so a resource always outlives its buffers. Subclass it
// in C++ or in Python (the extension's trampoline forwards these calls to Python methods).
// enable_shared_from_this: every allocation can share the one owner of a resource instead
// of making a control block per Buffer (the Python allocate path's largest cost).
class MemoryResource : public std::enable_shared_from_this<MemoryResource> {
 public:
  virtual ~MemoryResource() = default;

  // `size` bytes, in the order of `stream` where the resource is stream-ordered.
  [[nodiscard]] virtual CUdeviceptr allocate(std::size_t size, StreamRef stream) = 0;
  // Gives back memory from allocate(); stream-ordered resources free after the work queued
  // on `stream`, the others wait for it first.
  virtual void deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) = 0;
  [[nodiscard]] virtual bool is_device_accessible() const = 0;
  [[nodiscard]] virtual bool is_host_accessible() const = 0;
  // The device the memory lives on, or -1 for host memory.
  [[nodiscard]] virtual int device_id() const = 0;
  // Managed (unified) memory: the same address on the host and every device.
  [[nodiscard]] virtual bool is_managed() const { return false; }
  // Memory mapped from another process (IPC): this process may use it but not allocate it.
  [[nodiscard]] virtual bool is_mapped() const { return false; }
  // "DeviceMemoryResource(device 0, current pool)", for error messages.
  [[nodiscard]] virtual std::string describe() const { return "MemoryResource"; }
  // deallocate() threw `e` inside a Buffer's destructor, which cannot throw. By default the
  // next checked call reports it (false); a resource written in another language may report
  // it as that language does its finalizers' errors and return true.
  virtual bool report_failed_free(const std::exception& e, CUdeviceptr ptr, std::size_t size) noexcept {
    (void)e, (void)ptr, (void)size;
    return false;
  }

  // The resource Device::allocate-style calls on `device` use: set_for_device's, else the
  // device's current pool (a DeviceMemoryResource made on first use). Thread-safe.
  [[nodiscard]] static std::shared_ptr<MemoryResource> for_device(const Device& device);
  // A caller's memo of for_device's answers for devices 0-7, checked against the table's
  // version without its lock (Device.allocate asks per call). Not thread-safe: one per thread
  // (for_device(device) keeps one) or behind the caller's own lock (the Python extension's,
  // under the GIL). Weak: a memo never keeps a replaced resource alive.
  struct DeviceCache {
    std::uint64_t version = 0;
    std::weak_ptr<MemoryResource> resource[8];
  };
  [[nodiscard]] static std::shared_ptr<MemoryResource> for_device(const Device& device, DeviceCache& cache);
  // Replaces it; `resource` must be device-accessible memory of that device (ValueError
  // otherwise); nullptr restores the current pool.
  static void set_for_device(const Device& device, std::shared_ptr<MemoryResource> resource);
};

// Whether the stream-ordered allocator reads the calling thread's current context for a call
// on `stream`: only for the implicit streams (0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). The
// driver documents CUDA_ERROR_INVALID_CONTEXT for cuMemAllocFromPoolAsync/cuMemFreeAsync only
// as "default stream specified with no current context"; a created stream names its own
// context, so those calls skip the cuCtxGetCurrent (and any switch) on it.
[[nodiscard]] constexpr bool stream_order_needs_current_context(CUstream stream) noexcept {
  return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

// "1 MiB" / "1.5 GiB" / "3 bytes": sizes in messages.
[[nodiscard]] std::string format_bytes(unsigned long long bytes);

}  // namespace nanocuda
