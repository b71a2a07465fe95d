// Graph memory: allocations recorded into a stream capture as mem-alloc/mem-free graph nodes.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

#include "nanocuda/core/device.h"
#include "nanocuda/core/memory_resource.h"
#include "nanocuda/core/stream_ref.h"

namespace nanocuda {


// The device's graph-memory counters, in bytes, when read (cuDeviceGetGraphMemAttribute).
struct GraphMemoryAttributes {
  std::uint64_t reserved_mem_current = 0;  // backing memory the driver holds for graphs
  std::uint64_t reserved_mem_high = 0;     // its high-water mark
  std::uint64_t used_mem_current = 0;      // memory live graph allocations use
  std::uint64_t used_mem_high = 0;         // its high-water mark
};

// The memory of a device's graphs. allocate() only works on a capturing stream: the driver
// records cuMemAllocAsync there as a mem-alloc node of the graph being built (the memory
// exists while the graph runs). Its buffers are freed with cuMemFreeAsync, during the same
// capture (a mem-free node) or later on any stream. One resource per device (for_device);
// graph memory has no pool of its own to close, so there is nothing to own.
class GraphMemoryResource final : public MemoryResource {
 public:
  // The device's resource (made on first use and kept; thread-safe).
  [[nodiscard]] static std::shared_ptr<GraphMemoryResource> for_device(const Device& device);

  // std::runtime_error (cuda.core's words) unless `stream`'s capture is active.
  [[nodiscard]] CUdeviceptr allocate(std::size_t size, StreamRef stream) override;
  void deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) override;
  [[nodiscard]] bool is_device_accessible() const override { return true; }
  [[nodiscard]] bool is_host_accessible() const override { return false; }
  [[nodiscard]] int device_id() const override { return device_.ordinal(); }
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] const Device& device() const noexcept { return device_; }

  [[nodiscard]] GraphMemoryAttributes attributes() const;
  // Resets a high-water mark to the current usage (the driver accepts only 0 for them).
  void reset_reserved_mem_high();
  void reset_used_mem_high();
  // Gives the memory cached for graphs and not in use back to the OS (cuDeviceGraphMemTrim).
  void trim();

  explicit GraphMemoryResource(const Device& device) : device_(device) {}  // use for_device

 private:
  Device device_;
};

// Whether work queued on `stream` is being captured into a graph (cuStreamIsCapturing).
[[nodiscard]] bool is_capturing(StreamRef stream);

// cuda.core's rule for a stream-ordered pool: no allocation on a capturing stream (use
// GraphMemoryResource there). std::runtime_error naming `resource` when `stream` captures.
void require_not_capturing(const MemoryResource& resource, StreamRef stream);

}  // namespace nanocuda
