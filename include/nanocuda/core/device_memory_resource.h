// Device memory from a stream-ordered pool (cuMemPool): the device's current pool or a new
// one with its own options, shareable with other processes when IPC-enabled.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nanocuda/core/device.h"
#include "nanocuda/core/ipc_allocation_handle.h"
#include "nanocuda/core/ipc_buffer_descriptor.h"
#include "nanocuda/core/ipc_pool.h"
#include "nanocuda/core/memory_pool.h"
#include "nanocuda/core/memory_resource.h"

namespace nanocuda {

class Buffer;

struct DeviceMemoryResourceOptions {
  bool ipc_enabled = false;        // pool exportable as a POSIX file descriptor
  std::size_t max_size = 0;        // 0: the driver's default (the device's memory)
  std::uint64_t release_threshold = 0;  // bytes the pool keeps reserved after a sync
};

class DeviceMemoryResource : public MemoryResource {
 public:
  static constexpr const char* kClassName = "DeviceMemoryResource";  // in errors
  // The device's current pool (not owned: close() leaves it alone).
  explicit DeviceMemoryResource(const Device& device);
  // A new pool owned by this resource.
  DeviceMemoryResource(const Device& device, const DeviceMemoryResourceOptions& options);
  // A pool exported by another process (a "mapped" resource: it imports buffers, it cannot
  // allocate). The handle's file descriptor is only read; the caller still owns it. A handle
  // whose uuid is already in the registry gives the resource registered there (one mapping
  // per pool and process); a new mapping with a uuid is registered under it.
  static std::shared_ptr<DeviceMemoryResource> from_allocation_handle(const Device& device,
                                                                      const IpcAllocationHandle& handle);
  // The same from a bare file descriptor (received with recv_handle): no uuid, not registered.
  static std::shared_ptr<DeviceMemoryResource> from_allocation_fd(const Device& device, int fd);
  ~DeviceMemoryResource() override;
  DeviceMemoryResource(const DeviceMemoryResource&) = delete;
  DeviceMemoryResource& operator=(const DeviceMemoryResource&) = delete;

  [[nodiscard]] CUdeviceptr allocate(std::size_t size, StreamRef stream) override;
  void deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) override;
  [[nodiscard]] bool is_device_accessible() const override { return true; }
  [[nodiscard]] bool is_host_accessible() const override { return false; }
  [[nodiscard]] int device_id() const override { return device_.ordinal(); }
  [[nodiscard]] std::string describe() const override;

  [[nodiscard]] const Device& device() const noexcept { return device_; }
  [[nodiscard]] CUmemoryPool handle() const;  // throws once closed
  [[nodiscard]] bool is_owned() const noexcept { return owned_; }
  [[nodiscard]] bool is_ipc_enabled() const noexcept { return ipc_enabled_; }
  [[nodiscard]] bool is_mapped() const noexcept override { return mapped_; }
  [[nodiscard]] bool is_closed() const noexcept { return pool_ == nullptr; }
  // Random per pool, carried by its exports so an importing process maps a pool only once.
  [[nodiscard]] const std::array<unsigned char, 16>& uuid() const noexcept { return uuid_; }

  [[nodiscard]] MemoryPoolAttributes attributes() const;
  void set_release_threshold(std::uint64_t bytes);
  // Releases reserved memory the pool does not use, keeping at least `min_bytes_to_keep`.
  void trim_to(std::size_t min_bytes_to_keep);
  // Lets `peer`'s kernels read and write this pool's memory (cuMemPoolSetAccess), or not.
  void set_peer_access(const Device& peer, bool enable);
  // Ordinals of the other devices that can access the pool.
  [[nodiscard]] std::vector<int> peer_accessible_by() const;

  // IPC (pools made with ipc_enabled). The allocation handle is exported once and kept.
  [[nodiscard]] const IpcAllocationHandle& allocation_handle();
  // Exports the pool first if needed (the driver requires it).
  [[nodiscard]] IpcBufferDescriptor export_buffer(const Buffer& buffer);
  // Maps a buffer exported by another process; the Buffer frees only this process's mapping.
  static Buffer import_buffer(const std::shared_ptr<DeviceMemoryResource>& mapped,
                              const IpcBufferDescriptor& descriptor, StreamRef stream);

  // Destroys an owned or imported pool (the driver frees its memory once the buffers still
  // out are freed); a current pool is left alone. Later allocate() raises ValueError.
  void close();

  // Mapped pools already imported by this process, by uuid (so one import per pool).
  static std::shared_ptr<DeviceMemoryResource> find_mapped(const std::array<unsigned char, 16>& uuid);
  // cuda.core's registry: keys mapped resource `mr` by its exporter's `uuid` and returns the
  // one registered (an earlier one wins); from_registry throws std::runtime_error when none.
  static std::shared_ptr<DeviceMemoryResource> register_mapped(const std::shared_ptr<DeviceMemoryResource>& mr,
                                                               const std::array<unsigned char, 16>& uuid);
  static std::shared_ptr<DeviceMemoryResource> from_registry(const std::array<unsigned char, 16>& uuid);

 private:
  friend class PoolIpc;  // export_buffer/import_buffer: one implementation for both pool kinds
  DeviceMemoryResource(const Device& device, CUmemoryPool pool, bool owned, bool ipc, bool mapped);
  static std::shared_ptr<DeviceMemoryResource> import_pool(const Device& device, int fd);
  void check_open(const char* call) const;
  // A Buffer of this resource was freed (or handed back its import); the last one after close()
  // destroys the pool.
  void buffer_released() noexcept;
  // Destroys `pool` with the device's context current; never throws (errors are deferred).
  void destroy_pool(CUmemoryPool pool) noexcept;
  Device device_;
  CUmemoryPool pool_ = nullptr;
  PoolKeeper keeper_;  // close() under open Buffers: the last one's free destroys the pool
  bool owned_ = false, ipc_enabled_ = false, mapped_ = false;
  std::array<unsigned char, 16> uuid_{};
  PoolIpc ipc_;  // the export, or (mapped) the imports counted per address
};

}  // namespace nanocuda
