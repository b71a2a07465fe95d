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
  std::vector<int> peers;  // other devices given access (peer_access) to every mapping
  // cuda.core's allocation policy. Pinned device memory only (other allocation or location
  // types are a ValueError); `handle_type` is what cuMemCreate makes exportable (NONE: not).
  CUmemAllocationType allocation_type = CU_MEM_ALLOCATION_TYPE_PINNED;
  CUmemLocationType location_type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_NONE;
  CUmemAllocationGranularity_flags granularity = CU_MEM_ALLOC_GRANULARITY_RECOMMENDED;
  bool gpu_direct_rdma = false;  // ask for GPUDirect RDMA-capable memory
  CUmemAccess_flags self_access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUmemAccess_flags peer_access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
};

class VirtualMemoryResource : public MemoryResource {
 public:
  VirtualMemoryResource(const Device& device, VirtualMemoryResourceOptions options = {});
  ~VirtualMemoryResource() override;

  [[nodiscard]] CUdeviceptr allocate(std::size_t size, StreamRef stream) override;
  // Waits for `stream` (unmapping is not stream-ordered), then unmaps and releases.
  void deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) override;
  [[nodiscard]] bool is_device_accessible() const override { return true; }
  [[nodiscard]] bool is_host_accessible() const override { return false; }
  [[nodiscard]] int device_id() const override { return device_.ordinal(); }
  [[nodiscard]] std::string describe() const override;

  // Maps more physical memory after the buffer's end: same address, new size. A size not
  // above the buffer's leaves it as it is (cuda.core); past its reservation: ValueError.
  void grow(Buffer& buffer, std::size_t new_size);
  // Replaces the allocation policy (types, granularity, RDMA, access) for later mappings, as
  // cuda.core's modify_allocation(config=) does; reserve_size and peers stay.
  void set_policy(const VirtualMemoryResourceOptions& policy);
  // Grants `peer` read-write access to every current and future mapping.
  void add_peer(const Device& peer);
  [[nodiscard]] std::size_t granularity() const;
  [[nodiscard]] const VirtualMemoryResourceOptions& options() const noexcept { return options_; }
  // The policy checks set_policy and the constructor apply (ValueError naming `call`).
  static void check_policy(const VirtualMemoryResourceOptions& policy, const char* call);

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
