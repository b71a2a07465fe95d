// Managed memory: allocation, prefetch and advice.
#include "nanocuda/core/managed_memory_resource.h"

#include <string>
#include <utility>

#include "device_wait.h"
#include "nanocuda/core/stream.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace {

CUmemLocation location_of(int location, const char* call) {
  CUmemLocation loc{};
  if (location == -1) {
    loc.type = CU_MEM_LOCATION_TYPE_HOST;
    loc.id = 0;
    return loc;
  }
  int count = Device::count();
  if (location < 0 || location >= count)
    throw ValueError(std::string(call), "location " + std::to_string(location) +
                     " is not a device (this machine has " + std::to_string(count) +
                     (count == 1 ? " device" : " devices") + "; use a device ordinal or \"cpu\")");
  loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = location;
  return loc;
}

}  // namespace

ManagedMemoryResource::ManagedMemoryResource(const Device& device, ManagedMemoryResourceOptions options)
    : device_(device), options_(options) {
  if (options_.host_numa && !options_.pool)
    throw ValueError("ManagedMemoryResource: a host NUMA preferred location needs a managed pool (options)");
  if (options_.host_numa && !options_.preferred_location) {
    int node = device.attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
    if (node < 0)
      throw ValueError("ManagedMemoryResource: Cannot determine host NUMA ID for device " +
                       std::to_string(device.ordinal()) + " (the system reports no NUMA); give preferred_location");
    options_.preferred_location = node;
  }
  if (options_.host_numa && *options_.preferred_location < 0)
    throw ValueError("ManagedMemoryResource: preferred_location must be a NUMA node ID (>= 0) for a host NUMA "
                     "location, got " + std::to_string(*options_.preferred_location));
  if (options_.preferred_location && !options_.host_numa)
    (void)location_of(*options_.preferred_location, "ManagedMemoryResource(preferred_location)");
  if (!options_.pool) return;
  // The pool's location is the preferred location of its pages (none: the driver decides).
  PoolSpec spec;
  spec.type = CU_MEM_ALLOCATION_TYPE_MANAGED;
  spec.location = !options_.preferred_location       ? CU_MEM_LOCATION_TYPE_NONE
                  : options_.host_numa               ? CU_MEM_LOCATION_TYPE_HOST_NUMA
                  : *options_.preferred_location < 0 ? CU_MEM_LOCATION_TYPE_HOST
                                                     : CU_MEM_LOCATION_TYPE_DEVICE;
  spec.id = options_.preferred_location.value_or(0) < 0 ? 0 : options_.preferred_location.value_or(0);
  CurrentContext guard(*device.context());
  pool_ = create_pool(spec, describe());
}

ManagedMemoryResource::~ManagedMemoryResource() {
  if (!pool_) return;
  if (const auto* api = detail::loaded_driver())
    if (CUresult rc = api->cuMemPoolDestroy(pool_); rc != CUDA_SUCCESS)
      detail::record_deferred_error(rc, "cuMemPoolDestroy", "ManagedMemoryResource");
}

void ManagedMemoryResource::check_open(const char* call) const {
  if (closed_) throw ValueError(std::string("ManagedMemoryResource::") + call, describe() + " is closed");
}

CUmemoryPool ManagedMemoryResource::pool_for(const char* call) const {
  check_open(call);
  if (!pool_)
    throw ValueError(std::string("ManagedMemoryResource::") + call, describe() +
                     " is cuMemAllocManaged memory, not a pool; create it with ManagedMemoryResourceOptions for a pool");
  return pool_;
}

CUmemoryPool ManagedMemoryResource::handle() const { return pool_for("handle"); }

MemoryPoolAttributes ManagedMemoryResource::attributes() const {
  return read_pool_attributes(pool_for("attributes"), describe());
}

void ManagedMemoryResource::close() {
  if (closed_) return;
  closed_ = true;
  if (CUmemoryPool pool = std::exchange(pool_, nullptr))
    NANOCUDA_CALL(cuMemPoolDestroy, "ManagedMemoryResource::close", pool);
}

CUdeviceptr ManagedMemoryResource::allocate(std::size_t size, StreamRef stream) {
  check_open("allocate");
  if (pool_) {
    CurrentContext guard(stream.context());
    CUdeviceptr ptr = 0;
    NANOCUDA_CALL(cuMemAllocFromPoolAsync,
                  [&] { return describe() + ".allocate(" + std::to_string(size) + " bytes) on " + stream.describe(); },
                  &ptr, size, pool_, stream.handle());
    return ptr;
  }
  CurrentContext guard(*device_.context());  // cuMemAllocManaged is synchronous: the stream plays no part
  CUdeviceptr p = 0;
  NANOCUDA_CALL(cuMemAllocManaged,
                [&] { return describe() + ".allocate(" + std::to_string(size) + " bytes = " + format_bytes(size) + ")"; },
                &p, size, CU_MEM_ATTACH_GLOBAL);
  if (options_.preferred_location) {
    try {
      advise(p, size, "set_preferred_location", *options_.preferred_location);
    } catch (...) {
      (void)detail::driver().cuMemFree(p);  // nothing leaks when the advice is refused
      throw;
    }
  }
  return p;
}

void ManagedMemoryResource::deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) {
  if (options_.pool) {
    CurrentContext guard(stream.context());
    NANOCUDA_CALL(cuMemFreeAsync,
                  [&] { return describe() + ".deallocate(" + std::to_string(size) + " bytes) on " + stream.describe(); },
                  ptr, stream.handle());
    return;
  }
  detail::DeviceWait wait;
  stream.sync();  // cuMemFree is not stream-ordered
  CurrentContext guard(*device_.context());
  NANOCUDA_CALL(cuMemFree, [&] { return describe() + ".deallocate(" + std::to_string(size) + " bytes)"; }, ptr);
}

std::string ManagedMemoryResource::describe() const {
  std::string where;
  if (options_.preferred_location)
    where = options_.host_numa                 ? ", prefers host NUMA node " + std::to_string(*options_.preferred_location)
            : *options_.preferred_location < 0 ? ", prefers the host"
                                               : ", prefers device " + std::to_string(*options_.preferred_location);
  return "ManagedMemoryResource(device " + std::to_string(device_.ordinal()) + where +
         (options_.pool ? ", own pool" : "") + (closed_ ? ", closed" : "") + ")";
}

void ManagedMemoryResource::prefetch(CUdeviceptr ptr, std::size_t size, int location, StreamRef stream) {
  CUmemLocation loc = location_of(location, "ManagedMemoryResource::prefetch");
  CurrentContext guard(stream.context());
  NANOCUDA_CALL(cuMemPrefetchAsync,
                [&] { return "prefetch of " + std::to_string(size) + " bytes to " +
                             (location < 0 ? std::string("the host") : "device " + std::to_string(location)) +
                             " (is the memory managed?)"; },
                ptr, size, loc, 0u, stream.handle());
}

void ManagedMemoryResource::advise(CUdeviceptr ptr, std::size_t size, std::string_view advice, int location) {
  static const struct {
    std::string_view name;
    CUmem_advise value;
  } table[] = {
      {"set_read_mostly", CU_MEM_ADVISE_SET_READ_MOSTLY},
      {"unset_read_mostly", CU_MEM_ADVISE_UNSET_READ_MOSTLY},
      {"set_preferred_location", CU_MEM_ADVISE_SET_PREFERRED_LOCATION},
      {"unset_preferred_location", CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION},
      {"set_accessed_by", CU_MEM_ADVISE_SET_ACCESSED_BY},
      {"unset_accessed_by", CU_MEM_ADVISE_UNSET_ACCESSED_BY},
  };
  for (const auto& a : table) {
    if (a.name != advice) continue;
    CUmemLocation loc = location_of(location, "ManagedMemoryResource::advise");
    NANOCUDA_CALL(cuMemAdvise, [&] { return "advise '" + std::string(advice) + "' (is the memory managed?)"; },
                  ptr, size, a.value, loc);
    return;
  }
  throw ValueError("ManagedMemoryResource::advise", "unknown advice '" + std::string(advice) +
                   "'; expected set_read_mostly, unset_read_mostly, set_preferred_location, "
                   "unset_preferred_location, set_accessed_by or unset_accessed_by");
}

}  // namespace nanocuda
