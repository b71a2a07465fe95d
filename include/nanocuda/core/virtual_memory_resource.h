// Device memory through the virtual memory management API: an address range reserved up
// front and physical memory mapped into it, so a buffer grows in place.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

#include "nanocuda/core/device.h"
#include "nanocuda/core/memory_resource.h"

namespace nanocuda {

class Buffer;

struct VirtualMemoryResourceOptions {
  // Address space reserved per buffer (rounded up to the granularity); growing past it is
  // a ValueError. Address space is cheap (no memory is committed), so the default is large.
  std::size_t reserve_size = std::size_t(1) << 32;
  std::vector<int> peers;  // other devices given read-write access to every mapping
};

class VirtualMemoryResource : public MemoryResource {
 public:
  VirtualMemoryResource(const Device& device, VirtualMemoryResourceOptions options = {});
  ~VirtualMemoryResource() override;

  [[nodiscard]] CUdeviceptr allocate(std::size_t size, const Stream& stream) override;
  // Waits for `stream` (unmapping is not stream-ordered), then unmaps and releases.
  void deallocate(CUdeviceptr ptr, std::size_t size, const Stream& stream) override;
  [[nodiscard]] bool is_device_accessible() const override { return true; }
  [[nodiscard]] bool is_host_accessible() const override { return false; }
  [[nodiscard]] int device_id() const override { return device_.ordinal(); }
  [[nodiscard]] std::string describe() const override;

  // Maps more physical memory after the buffer's end: same address, new size. ValueError
  // if `new_size` is smaller than the buffer or past its reservation.
  void grow(Buffer& buffer, std::size_t new_size);
  // Grants `peer` read-write access to every current and future mapping.
  void add_peer(const Device& peer);
  [[nodiscard]] std::size_t granularity() const;
  [[nodiscard]] const VirtualMemoryResourceOptions& options() const noexcept { return options_; }

 private:
  struct Chunk {
    CUmemGenericAllocationHandle handle;
    std::size_t offset, size;
  };
  struct Range {
    std::size_t reserved = 0, mapped = 0;
    std::vector<Chunk> chunks;
  };
  void map_chunk(CUdeviceptr base, Range& range, std::size_t size);
  void set_access(CUdeviceptr ptr, std::size_t size) const;
  void release(CUdeviceptr base, Range& range) noexcept;
  Device device_;
  VirtualMemoryResourceOptions options_;
  mutable std::mutex mutex_;
  std::map<CUdeviceptr, Range> ranges_;
};

}  // namespace nanocuda
