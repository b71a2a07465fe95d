// Page-locked host memory as a memory resource: cuMemHostAlloc, or an owned host pool.
#pragma once

#include <cuda.h>

#include <memory>
#include <optional>

#include "nanocuda/core/device.h"
#include "nanocuda/core/ipc_pool.h"
#include "nanocuda/core/memory_pool.h"
#include "nanocuda/core/memory_resource.h"

namespace nanocuda {

// cuda.core's PinnedMemoryResourceOptions: a stream-ordered pool of pinned host memory.
struct PinnedMemoryResourceOptions {
  bool ipc_enabled = false;       // exportable (POSIX file descriptor); needs a NUMA node
  std::size_t max_size = 0;       // 0: the driver's default
  std::optional<int> numa_id;     // none: the OS places it, or `device`'s host NUMA node for IPC
};

// Host memory every device can read. Without options it is cuMemHostAlloc memory, not
// stream-ordered: deallocate() waits for `stream` before cuMemFreeHost, so memory is never
// freed under a copy still in flight. With options it comes from an owned host pool
// (CU_MEM_LOCATION_TYPE_HOST, or HOST_NUMA when a NUMA node is given or IPC needs one),
// allocated and freed in stream order, with the pool's attributes.
class Buffer;

class PinnedMemoryResource : public MemoryResource {
 public:
  static constexpr const char* kClassName = "PinnedMemoryResource";  // in errors
  // `device` picks the context the calls run in (the memory is portable) and, for IPC, the
  // host NUMA node nearest to it.
  explicit PinnedMemoryResource(const Device& device = Device()) : device_(device) {}
  PinnedMemoryResource(const Device& device, const PinnedMemoryResourceOptions& options);
  // A host pool exported by another process (a "mapped" resource: it imports buffers, it
  // cannot allocate), made accessible to every device here. The rules are
  // DeviceMemoryResource's (PoolIpc): the handle's fd is only read, a uuid already in the
  // registry gives the resource registered there, a new mapping is registered under it.
  static std::shared_ptr<PinnedMemoryResource> from_allocation_handle(const Device& device,
                                                                      const IpcAllocationHandle& handle);
  static std::shared_ptr<PinnedMemoryResource> from_allocation_fd(const Device& device, int fd);
  ~PinnedMemoryResource() override;
  PinnedMemoryResource(const PinnedMemoryResource&) = delete;
  PinnedMemoryResource& operator=(const PinnedMemoryResource&) = delete;

  [[nodiscard]] CUdeviceptr allocate(std::size_t size, StreamRef stream) override;
  void deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) override;
  [[nodiscard]] bool is_device_accessible() const override { return true; }
  [[nodiscard]] bool is_host_accessible() const override { return true; }
  [[nodiscard]] int device_id() const override { return -1; }
  [[nodiscard]] std::string describe() const override;

  [[nodiscard]] bool is_pool() const noexcept { return pooled_; }
  [[nodiscard]] bool is_ipc_enabled() const noexcept { return ipc_enabled_; }
  [[nodiscard]] bool is_closed() const noexcept { return closed_; }
  [[nodiscard]] bool is_mapped() const noexcept override { return mapped_; }
  // Random per IPC-enabled pool (zero otherwise), carried by its exports.
  [[nodiscard]] const PoolUuid& uuid() const noexcept { return uuid_; }
  // The host NUMA node of the pool; -1 when the OS places the memory.
  [[nodiscard]] int numa_id() const noexcept { return numa_id_; }
  // The pool (ValueError without options or once closed).
  [[nodiscard]] CUmemoryPool handle() const;
  [[nodiscard]] MemoryPoolAttributes attributes() const;
  // Destroys the pool, or, with Buffers open, leaves that to the last one's free; later
  // allocate() raises ValueError. Without a pool it only marks the resource closed.
  void close();

  // IPC (pools made with ipc_enabled), as DeviceMemoryResource's: the handle is exported once
  // and kept; a buffer's export exports the pool first; an import maps into a mapped pool.
  [[nodiscard]] const IpcAllocationHandle& allocation_handle();
  [[nodiscard]] IpcBufferDescriptor export_buffer(const Buffer& buffer);
  static Buffer import_buffer(const std::shared_ptr<PinnedMemoryResource>& mapped,
                              const IpcBufferDescriptor& descriptor, StreamRef stream);
  // The registry of mapped pools (shared with DeviceMemoryResource's, by uuid).
  static std::shared_ptr<PinnedMemoryResource> find_mapped(const PoolUuid& uuid);
  static std::shared_ptr<PinnedMemoryResource> register_mapped(const std::shared_ptr<PinnedMemoryResource>& mr,
                                                               const PoolUuid& uuid);
  static std::shared_ptr<PinnedMemoryResource> from_registry(const PoolUuid& uuid);

 private:
  friend class PoolIpc;  // export_buffer/import_buffer: one implementation for both pool kinds
  PinnedMemoryResource(const Device& device, CUmemoryPool pool);  // a mapped pool
  static std::shared_ptr<PinnedMemoryResource> import_pool(const Device& device, int fd);
  void pool_released() noexcept;
  void check_open(const char* call) const;
  // Destroys `pool` with the device's context current; never throws (errors are deferred).
  void destroy_pool(CUmemoryPool pool) noexcept;
  Device device_;
  CUmemoryPool pool_ = nullptr;
  PoolKeeper keeper_;  // close() under open Buffers: the last one's free destroys the pool
  bool pooled_ = false, ipc_enabled_ = false, closed_ = false, mapped_ = false;
  int numa_id_ = -1;
  PoolUuid uuid_{};
  PoolIpc ipc_;  // the export, or (mapped) the imports counted per address
};

}  // namespace nanocuda
