// Unified (managed) memory as a memory resource, with prefetch and advice.
#pragma once

#include <cuda.h>

#include <string_view>

#include "nanocuda/core/device.h"
#include "nanocuda/core/memory_resource.h"

namespace nanocuda {

// cuMemAllocManaged(CU_MEM_ATTACH_GLOBAL): pages migrate between the host and the devices
// on use. deallocate() waits for `stream` before cuMemFree (not stream-ordered).
class ManagedMemoryResource : public MemoryResource {
 public:
  explicit ManagedMemoryResource(const Device& device) : device_(device) {}
  [[nodiscard]] CUdeviceptr allocate(std::size_t size, const Stream& stream) override;
  void deallocate(CUdeviceptr ptr, std::size_t size, const Stream& stream) override;
  [[nodiscard]] bool is_device_accessible() const override { return true; }
  [[nodiscard]] bool is_host_accessible() const override { return true; }
  [[nodiscard]] int device_id() const override { return device_.ordinal(); }
  [[nodiscard]] std::string describe() const override;

  // Location: a device ordinal, or -1 for the host. Ordinals are checked (ValueError).
  static void prefetch(CUdeviceptr ptr, std::size_t size, int location, const Stream& stream);
  // `advice`: set_read_mostly, unset_read_mostly, set_preferred_location,
  // unset_preferred_location, set_accessed_by, unset_accessed_by (ValueError otherwise).
  static void advise(CUdeviceptr ptr, std::size_t size, std::string_view advice, int location);

 private:
  Device device_;
};

}  // namespace nanocuda
