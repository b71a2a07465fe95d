// Stream-ordered pools: reading their attributes and creating owned ones of any memory kind.
#include "nanocuda/core/memory_pool.h"

#include "nanocuda/core/device.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace {

std::uint64_t u64_attribute(CUmemoryPool pool, CUmemPool_attribute attr, const std::string& owner) {
  cuuint64_t value = 0;
  NANOCUDA_CALL(cuMemPoolGetAttribute, [&] { return owner; }, pool, attr, &value);
  return value;
}

// The reuse policies are ints in the driver (the counters are 64-bit).
bool flag_attribute(CUmemoryPool pool, CUmemPool_attribute attr, const std::string& owner) {
  int value = 0;
  NANOCUDA_CALL(cuMemPoolGetAttribute, [&] { return owner; }, pool, attr, &value);
  return value != 0;
}

}  // namespace

MemoryPoolAttributes read_pool_attributes(CUmemoryPool pool, const std::string& owner) {
  MemoryPoolAttributes a;
  a.reserved_mem_current = u64_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, owner);
  a.reserved_mem_high = u64_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, owner);
  a.used_mem_current = u64_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, owner);
  a.used_mem_high = u64_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, owner);
  a.release_threshold = u64_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, owner);
  a.reuse_follow_event_dependencies = flag_attribute(pool, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, owner);
  a.reuse_allow_opportunistic = flag_attribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, owner);
  a.reuse_allow_internal_dependencies = flag_attribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, owner);
  return a;
}

void allow_every_device(CUmemoryPool pool, const std::string& owner) {
  int n = Device::count();
  for (int d = 0; d < n; ++d) {
    CUmemAccessDesc desc{};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = d;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    NANOCUDA_CALL(cuMemPoolSetAccess, [&] { return owner + ": access for device " + std::to_string(d); },
                  pool, &desc, 1);
  }
}

CUmemoryPool create_pool(const PoolSpec& spec, const std::string& owner) {
  CUmemPoolProps props{};
  props.allocType = spec.type;
  props.handleTypes = spec.ipc_enabled ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = spec.location;
  props.location.id = spec.id;
  props.maxSize = spec.max_size;
  CUmemoryPool pool = nullptr;
  NANOCUDA_CALL(cuMemPoolCreate, [&] { return owner; }, &pool, &props);
  bool host = spec.location == CU_MEM_LOCATION_TYPE_HOST || spec.location == CU_MEM_LOCATION_TYPE_HOST_NUMA;
  if (!host) return pool;
  try {
    allow_every_device(pool, owner);
  } catch (...) {
    (void)detail::driver().cuMemPoolDestroy(pool);  // the access error is the one to report
    throw;
  }
  return pool;
}

}  // namespace nanocuda
