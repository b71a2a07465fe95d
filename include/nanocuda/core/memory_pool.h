// What every stream-ordered pool shares: its counters and reuse policy, and creating an owned one.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
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

// Makes a host pool readable and writable by every device (cuMemPoolSetAccess): the driver
// makes a host pool, created or imported, reachable from the CPU only.
void allow_every_device(CUmemoryPool pool, const std::string& owner);

// How long an owned pool lives: Buffers hold their resource, and close() under open Buffers
// hands the pool to the last of them instead of destroying it under them, so no free (above
// all an importer's unmap) ever reaches a destroyed pool. Each method gives back the pool to
// destroy now, or null; the caller destroys it (with a context current).
class PoolKeeper {
 public:
  void allocated() noexcept { live_.fetch_add(1, std::memory_order_relaxed); }
  // A Buffer was freed: the pool, when it was the last one after close().
  [[nodiscard]] CUmemoryPool released() noexcept {
    return live_.fetch_sub(1, std::memory_order_acq_rel) == 1 ? closed_.exchange(nullptr) : nullptr;
  }
  // close(): `pool` when no Buffer is open, else null (the last release gives it).
  [[nodiscard]] CUmemoryPool close(CUmemoryPool pool) noexcept {
    if (live_.load(std::memory_order_acquire) == 0) return pool;
    closed_.store(pool);
    if (live_.load(std::memory_order_acquire) > 0) return nullptr;
    return closed_.exchange(nullptr);  // the last went meanwhile: whoever takes it destroys it
  }
  // The destructor's: a pool still waiting, if any.
  [[nodiscard]] CUmemoryPool take() noexcept { return closed_.exchange(nullptr); }

 private:
  std::atomic<std::size_t> live_{0};
  std::atomic<CUmemoryPool> closed_{nullptr};
};

}  // namespace nanocuda
