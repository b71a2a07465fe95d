// What every stream-ordered pool shares: its counters and reuse policy, and creating an owned one.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace nanocuda {

// The pool's counters and reuse policy (cuMemPoolGetAttribute), read at once.
struct MemoryPoolAttributes {
  std::uint64_t reserved_mem_current = 0, reserved_mem_high = 0;
  std::uint64_t used_mem_current = 0, used_mem_high = 0;
  std::uint64_t release_threshold = 0;
  bool reuse_follow_event_dependencies = false;
  bool reuse_allow_opportunistic = false;
  bool reuse_allow_internal_dependencies = false;
};

// Reads every attribute of `pool`; `owner` names it in errors.
[[nodiscard]] MemoryPoolAttributes read_pool_attributes(CUmemoryPool pool, const std::string& owner);

// What an owned pool is made of: the memory kind, where it lives (a device ordinal, a host
// NUMA node, or the host/no location), its size limit and whether it can be exported.
struct PoolSpec {
  CUmemAllocationType type = CU_MEM_ALLOCATION_TYPE_PINNED;
  CUmemLocationType location = CU_MEM_LOCATION_TYPE_DEVICE;
  int id = 0;
  std::size_t max_size = 0;
  bool ipc_enabled = false;
};

// cuMemPoolCreate; host pools (HOST, HOST_NUMA) are also made readable and writable by every
// device, since the driver makes them reachable from the CPU only. `owner` names it in errors.
[[nodiscard]] CUmemoryPool create_pool(const PoolSpec& spec, const std::string& owner);

}  // namespace nanocuda
