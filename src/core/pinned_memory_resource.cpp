// Pinned host memory through the resource interface: cuMemHostAlloc or an owned host pool.
#include "nanocuda/core/pinned_memory_resource.h"

#include <utility>

#include "device_wait.h"
#include "nanocuda/core/buffer.h"
#include "nanocuda/core/stream.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/driver/deferred_errors.h"

namespace nanocuda {

PinnedMemoryResource::PinnedMemoryResource(const Device& device, const PinnedMemoryResourceOptions& options)
    : device_(device), pooled_(true), ipc_enabled_(options.ipc_enabled) {
  if (options.numa_id && *options.numa_id < 0)
    throw ValueError("PinnedMemoryResource: numa_id must be >= 0, got " + std::to_string(*options.numa_id));
  PoolSpec spec;
  spec.max_size = options.max_size;
  spec.ipc_enabled = options.ipc_enabled;
  // A HOST pool cannot be exported (the driver's rule), so IPC places it on a NUMA node.
  if (options.numa_id) {
    numa_id_ = *options.numa_id;
  } else if (options.ipc_enabled) {
    numa_id_ = device.attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
    if (numa_id_ < 0) numa_id_ = 0;  // a machine without NUMA has one node, node 0
  }
  spec.location = numa_id_ >= 0 ? CU_MEM_LOCATION_TYPE_HOST_NUMA : CU_MEM_LOCATION_TYPE_HOST;
  spec.id = numa_id_ >= 0 ? numa_id_ : 0;
  if (options.ipc_enabled) uuid_ = random_pool_uuid();
  CurrentContext guard(*device.context());
  pool_ = create_pool(spec, describe());
}

PinnedMemoryResource::PinnedMemoryResource(const Device& device, CUmemoryPool pool)
    : device_(device), pool_(pool), pooled_(true), ipc_enabled_(true), mapped_(true) {}

std::shared_ptr<PinnedMemoryResource> PinnedMemoryResource::import_pool(const Device& device, int fd) {
  CurrentContext guard(*device.context());
  CUmemoryPool pool = PoolIpc::import_pool(fd, PoolPlace::host, -1, "PinnedMemoryResource::from_allocation_handle");
  return std::shared_ptr<PinnedMemoryResource>(new PinnedMemoryResource(device, pool));
}

std::shared_ptr<PinnedMemoryResource> PinnedMemoryResource::from_allocation_handle(const Device& device,
                                                                                   const IpcAllocationHandle& handle) {
  if (handle.uuid() != PoolUuid{})  // one mapping per pool and process
    if (auto mr = mapped_of_kind<PinnedMemoryResource>(handle.uuid(), "PinnedMemoryResource::from_allocation_handle",
                                                       "PinnedMemoryResource"))
      return mr;
  auto mr = import_pool(device, handle.fd());
  return handle.uuid() == PoolUuid{} ? mr : register_mapped(mr, handle.uuid());
}

std::shared_ptr<PinnedMemoryResource> PinnedMemoryResource::from_allocation_fd(const Device& device, int fd) {
  return import_pool(device, fd);
}

std::shared_ptr<PinnedMemoryResource> PinnedMemoryResource::find_mapped(const PoolUuid& uuid) {
  return std::dynamic_pointer_cast<PinnedMemoryResource>(find_mapped_pool(uuid));
}

std::shared_ptr<PinnedMemoryResource> PinnedMemoryResource::register_mapped(
    const std::shared_ptr<PinnedMemoryResource>& mr, const PoolUuid& uuid) {
  if (!mr || !mr->mapped_)
    throw ValueError("PinnedMemoryResource::register_mapped", "only a mapped resource (from_allocation_handle) is "
                     "registered; " + (mr ? mr->describe() : std::string("None")) + " is not one");
  if (mr->uuid_ != PoolUuid{} && mr->uuid_ != uuid)
    throw ValueError("PinnedMemoryResource::register_mapped", mr->describe() + " is the mapping of pool " +
                     format_uuid(mr->uuid_) + ", not of " + format_uuid(uuid));
  auto registered = add_mapped_pool(mr, uuid);
  if (registered == mr) mr->uuid_ = uuid;
  auto same = std::dynamic_pointer_cast<PinnedMemoryResource>(registered);
  if (!same)
    throw ValueError("PinnedMemoryResource::register_mapped", "pool " + format_uuid(uuid) + " is registered as " +
                     registered->describe() + ", not as a PinnedMemoryResource");
  return same;
}

std::shared_ptr<PinnedMemoryResource> PinnedMemoryResource::from_registry(const PoolUuid& uuid) {
  auto mr = find_mapped(uuid);
  if (!mr) throw_mapped_pool_not_found(uuid, "PinnedMemoryResource::from_allocation_handle");
  return mr;
}

const IpcAllocationHandle& PinnedMemoryResource::allocation_handle() {
  check_open("get_allocation_handle");
  if (!ipc_enabled_ || mapped_)
    throw_not_ipc_enabled("PinnedMemoryResource::allocation_handle", describe(),
                          "create it with PinnedMemoryResourceOptions(ipc_enabled=True)");
  CurrentContext guard(*device_.context());  // a pickling thread may have no context current
  return ipc_.allocation_handle(pool_, uuid_, describe());
}

// Both pool kinds share one implementation (PoolIpc), so both get the same checks.
IpcBufferDescriptor PinnedMemoryResource::export_buffer(const Buffer& buffer) {
  return PoolIpc::export_buffer(*this, buffer);
}

Buffer PinnedMemoryResource::import_buffer(const std::shared_ptr<PinnedMemoryResource>& mapped,
                                           const IpcBufferDescriptor& descriptor, StreamRef stream) {
  return PoolIpc::import_buffer(mapped, descriptor, stream);
}

void PinnedMemoryResource::pool_released() noexcept {
  if (CUmemoryPool pool = keeper_.released()) destroy_pool(pool);  // close() waited for it
}

PinnedMemoryResource::~PinnedMemoryResource() {
  destroy_pool(std::exchange(pool_, nullptr));
  destroy_pool(keeper_.take());
}

void PinnedMemoryResource::destroy_pool(CUmemoryPool pool) noexcept {
  const auto* api = detail::loaded_driver();
  if (!pool || !api) return;
  try {
    CurrentContext guard(*device_.context());  // a finalizer's thread may have none current
    if (CUresult rc = api->cuMemPoolDestroy(pool); rc != CUDA_SUCCESS)
      detail::record_deferred_error(rc, "cuMemPoolDestroy", "PinnedMemoryResource");
  } catch (const Error& e) {
    detail::record_deferred_error(e.code(), "cuMemPoolDestroy", "PinnedMemoryResource");
  } catch (...) {
    detail::record_deferred_error(CUDA_ERROR_UNKNOWN, "cuMemPoolDestroy", "PinnedMemoryResource");
  }
}

std::string PinnedMemoryResource::describe() const {
  if (mapped_) return std::string("PinnedMemoryResource(host pool mapped from another process") + (closed_ ? ", closed)" : ")");
  if (!pooled_) return closed_ ? "PinnedMemoryResource(closed)" : "PinnedMemoryResource";
  std::string where = numa_id_ >= 0 ? "NUMA node " + std::to_string(numa_id_) : std::string("host");
  return "PinnedMemoryResource(own pool on " + where + (ipc_enabled_ ? ", IPC" : "") + (closed_ ? ", closed" : "") + ")";
}

void PinnedMemoryResource::check_open(const char* call) const {
  if (closed_) throw ValueError(std::string("PinnedMemoryResource.") + call + ": " + describe() + " is closed");
}

CUmemoryPool PinnedMemoryResource::handle() const {
  check_open("handle");
  if (!pooled_)
    throw ValueError("PinnedMemoryResource::handle", describe() + " is cuMemHostAlloc memory, not a pool; "
                     "create it with PinnedMemoryResourceOptions for a pool");
  return pool_;
}

MemoryPoolAttributes PinnedMemoryResource::attributes() const {
  check_open("attributes");
  if (!pooled_)
    throw ValueError("PinnedMemoryResource::attributes", describe() + " is cuMemHostAlloc memory, not a pool; "
                     "create it with PinnedMemoryResourceOptions for a pool");
  return read_pool_attributes(pool_, describe());
}

CUdeviceptr PinnedMemoryResource::allocate(std::size_t size, StreamRef stream) {
  check_open("allocate");
  // cuda.core's exact words (a TypeError): its users match on them.
  if (mapped_) throw TypeError("Cannot allocate from a mapped IPC-enabled memory resource");
  if (pooled_) {
    CurrentContext guard(stream.context());
    CUdeviceptr ptr = 0;
    NANOCUDA_CALL(cuMemAllocFromPoolAsync,
                  [&] { return describe() + ".allocate(" + std::to_string(size) + " bytes) on " + stream.describe(); },
                  &ptr, size, pool_, stream.handle());
    keeper_.allocated();
    return ptr;
  }
  CurrentContext guard(*device_.context());  // cuMemHostAlloc is synchronous: the stream plays no part
  void* p = nullptr;
  NANOCUDA_CALL(cuMemHostAlloc,
                [&] { return "PinnedMemoryResource::allocate(" + std::to_string(size) + " bytes = " + format_bytes(size) + ")"; },
                &p, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  return reinterpret_cast<CUdeviceptr>(p);
}

void PinnedMemoryResource::deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) {
  if (pooled_) {
    if (mapped_ && !ipc_.release_import(ptr)) {  // another import still uses it
      pool_released();
      return;
    }
    {
      CurrentContext guard(stream.context());
      NANOCUDA_CALL(cuMemFreeAsync,
                    [&] { return describe() + ".deallocate(" + std::to_string(size) + " bytes) on " + stream.describe(); },
                    ptr, stream.handle());
    }
    if (mapped_) ipc_.forget_import(ptr);  // freed (a failed free leaves the buffer open, still counted)
    pool_released();
    return;
  }
  detail::DeviceWait wait;
  stream.sync();  // a copy in flight may still read or write it
  NANOCUDA_CALL(cuMemFreeHost,
                [&] { return "PinnedMemoryResource::deallocate(" + std::to_string(size) + " bytes)"; },
                reinterpret_cast<void*>(ptr));
}

void PinnedMemoryResource::close() {
  if (closed_) return;
  closed_ = true;
  ipc_.close_handle();
  if (mapped_) remove_mapped_pool(uuid_, this);
  if (CUmemoryPool pool = keeper_.close(std::exchange(pool_, nullptr))) {  // null: Buffers wait
    CurrentContext guard(*device_.context());  // the caller's thread may have no context current
    NANOCUDA_CALL(cuMemPoolDestroy, "PinnedMemoryResource::close", pool);
  }
}

}  // namespace nanocuda
