// Unified (managed) memory as a memory resource, with prefetch and advice.
#pragma once

#include <cuda.h>

#include <string_view>

#include <optional>

#include "nanocuda/core/device.h"
#include "nanocuda/core/memory_pool.h"
#include "nanocuda/core/memory_resource.h"

namespace nanocuda {

// cuMemAllocManaged(CU_MEM_ATTACH_GLOBAL): pages migrate between the host and the devices
// on use. deallocate() waits for `stream` before cuMemFree (not stream-ordered).
struct ManagedMemoryResourceOptions {
  // Where pages prefer to live (cuMemAdvise SET_PREFERRED_LOCATION on every allocation): a
  // device ordinal, -1 for the host; none: the driver decides.
  std::optional<int> preferred_location;
  // An owned stream-ordered managed pool (cuMemPoolCreate, CUDA 13) placed at the preferred
  // location, with the pool's attributes, instead of cuMemAllocManaged per allocation.
  bool pool = false;
  // preferred_location is a host NUMA node (pools only; none: the device's nearest node).
  bool host_numa = false;
};

class ManagedMemoryResource : public MemoryResource {
 public:
  // ValueError when the preferred location is not a device of this machine (nor -1).
  explicit ManagedMemoryResource(const Device& device, ManagedMemoryResourceOptions options = {});
  ~ManagedMemoryResource() override;
  ManagedMemoryResource(const ManagedMemoryResource&) = delete;
  ManagedMemoryResource& operator=(const ManagedMemoryResource&) = delete;
  [[nodiscard]] CUdeviceptr allocate(std::size_t size, StreamRef stream) override;
  void deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) override;
  [[nodiscard]] bool is_device_accessible() const override { return true; }
  [[nodiscard]] bool is_host_accessible() const override { return true; }
  [[nodiscard]] bool is_managed() const override { return true; }
  [[nodiscard]] int device_id() const override { return device_.ordinal(); }
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] const std::optional<int>& preferred_location() const noexcept { return options_.preferred_location; }
  [[nodiscard]] bool is_pool() const noexcept { return options_.pool; }
  [[nodiscard]] bool prefers_host_numa() const noexcept { return options_.host_numa; }
  [[nodiscard]] bool is_closed() const noexcept { return closed_; }
  // The pool (ValueError without one or once closed).
  [[nodiscard]] CUmemoryPool handle() const;
  [[nodiscard]] MemoryPoolAttributes attributes() const;
  // Destroys the pool (memory still in Buffers is freed when they close); later allocate()
  // raises ValueError.
  void close();

  // Location: a device ordinal, or -1 for the host. Ordinals are checked (ValueError).
  static void prefetch(CUdeviceptr ptr, std::size_t size, int location, StreamRef stream);
  // `advice`: set_read_mostly, unset_read_mostly, set_preferred_location,
  // unset_preferred_location, set_accessed_by, unset_accessed_by (ValueError otherwise).
  static void advise(CUdeviceptr ptr, std::size_t size, std::string_view advice, int location);

 private:
  void check_open(const char* call) const;
  CUmemoryPool pool_for(const char* call) const;  // ValueError without a pool or once closed
  Device device_;
  ManagedMemoryResourceOptions options_;
  CUmemoryPool pool_ = nullptr;
  bool closed_ = false;
};

}  // namespace nanocuda
