// Pinned host memory through the resource interface: cuMemHostAlloc or an owned host pool.
#include "nanocuda/core/pinned_memory_resource.h"

#include <utility>

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
  CurrentContext guard(*device.context());
  pool_ = create_pool(spec, describe());
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
    throw ValueError("PinnedMemoryResource.handle: " + describe() + " is cuMemHostAlloc memory, not a pool; "
                     "create it with PinnedMemoryResourceOptions for a pool");
  return pool_;
}

MemoryPoolAttributes PinnedMemoryResource::attributes() const {
  check_open("attributes");
  if (!pooled_)
    throw ValueError("PinnedMemoryResource.attributes: " + describe() + " is cuMemHostAlloc memory, not a pool; "
                     "create it with PinnedMemoryResourceOptions for a pool");
  return read_pool_attributes(pool_, describe());
}

CUdeviceptr PinnedMemoryResource::allocate(std::size_t size, const Stream& stream) {
  check_open("allocate");
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
                [&] { return "PinnedMemoryResource.allocate(" + std::to_string(size) + " bytes = " + format_bytes(size) + ")"; },
                &p, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  return reinterpret_cast<CUdeviceptr>(p);
}

void PinnedMemoryResource::deallocate(CUdeviceptr ptr, std::size_t size, const Stream& stream) {
  if (pooled_) {
    CurrentContext guard(stream.context());
    NANOCUDA_CALL(cuMemFreeAsync,
                  [&] { return describe() + ".deallocate(" + std::to_string(size) + " bytes) on " + stream.describe(); },
                  ptr, stream.handle());
    if (CUmemoryPool pool = keeper_.released()) destroy_pool(pool);  // close() waited for it
    return;
  }
  stream.sync();  // a copy in flight may still read or write it
  NANOCUDA_CALL(cuMemFreeHost,
                [&] { return "PinnedMemoryResource.deallocate(" + std::to_string(size) + " bytes)"; },
                reinterpret_cast<void*>(ptr));
}

void PinnedMemoryResource::close() {
  if (closed_) return;
  closed_ = true;
  if (CUmemoryPool pool = keeper_.close(std::exchange(pool_, nullptr))) {  // null: Buffers wait
    CurrentContext guard(*device_.context());  // the caller's thread may have no context current
    NANOCUDA_CALL(cuMemPoolDestroy, "PinnedMemoryResource.close", pool);
  }
}

}  // namespace nanocuda
