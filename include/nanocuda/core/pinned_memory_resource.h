// Page-locked host memory as a memory resource (cuMemHostAlloc, portable and device-mapped).
#pragma once

#include "nanocuda/core/device.h"
#include "nanocuda/core/memory_resource.h"

namespace nanocuda {

// Host memory every device can read; not stream-ordered: deallocate() waits for `stream`
// before cuMemFreeHost, so memory is never freed under a copy still in flight.
class PinnedMemoryResource : public MemoryResource {
 public:
  // `device` only picks the context the allocation call runs in (the memory is portable).
  explicit PinnedMemoryResource(const Device& device = Device(0)) : device_(device) {}
  [[nodiscard]] CUdeviceptr allocate(std::size_t size, const Stream& stream) override;
  void deallocate(CUdeviceptr ptr, std::size_t size, const Stream& stream) override;
  [[nodiscard]] bool is_device_accessible() const override { return true; }
  [[nodiscard]] bool is_host_accessible() const override { return true; }
  [[nodiscard]] int device_id() const override { return -1; }
  [[nodiscard]] std::string describe() const override { return "PinnedMemoryResource"; }

 private:
  Device device_;
};

}  // namespace nanocuda
