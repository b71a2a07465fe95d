// Batched memory operations: managed prefetch/discard, advice and its queries, batched copies.
#include "nanocuda/core/managed_ops.h"

#include <cstdio>
#include <stdexcept>

#include "nanocuda/core/address_device.h"
#include "nanocuda/core/device.h"
#include "nanocuda/core/graph_memory_resource.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace {

constexpr const char* kKindNames[] = {"device", "host", "host_numa", "host_numa_current"};

}  // namespace

MemoryLocation MemoryLocation::from_name(std::string_view kind, int id, const char* call) {
  if (kind == "device") return device(id);
  if (kind == "host") return host();
  if (kind == "host_numa") return {Kind::host_numa, id};
  if (kind == "host_numa_current") return {Kind::host_numa_current, 0};
  throw ValueError(call, "unknown location kind '" + std::string(kind) + "'");
}

const char* MemoryLocation::kind_name() const noexcept { return kKindNames[static_cast<int>(kind)]; }

CUmem_advise advice_from_name(std::string_view name, const char* call) {
  static constexpr struct {
    std::string_view name;
    CUmem_advise value;
  } kAdvice[] = {{"set_read_mostly", CU_MEM_ADVISE_SET_READ_MOSTLY},
                 {"unset_read_mostly", CU_MEM_ADVISE_UNSET_READ_MOSTLY},
                 {"set_preferred_location", CU_MEM_ADVISE_SET_PREFERRED_LOCATION},
                 {"unset_preferred_location", CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION},
                 {"set_accessed_by", CU_MEM_ADVISE_SET_ACCESSED_BY},
                 {"unset_accessed_by", CU_MEM_ADVISE_UNSET_ACCESSED_BY}};
  for (const auto& a : kAdvice)
    if (name == a.name) return a.value;
  throw ValueError(call, "unknown advice '" + std::string(name) + "'");
}

namespace {

std::string hex(CUdeviceptr p) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(p));
  return text;
}

CUmemLocation to_driver(const MemoryLocation& loc, const char* call) {
  CUmemLocation out{};
  switch (loc.kind) {
    case MemoryLocation::Kind::device: {
      int count = Device::count();
      if (loc.id < 0 || loc.id >= count)
        throw ValueError(std::string(call) + ": device " + std::to_string(loc.id) + " does not exist (this machine has " +
                         std::to_string(count) + (count == 1 ? " device)" : " devices)"));
      out.type = CU_MEM_LOCATION_TYPE_DEVICE;
      out.id = loc.id;
      break;
    }
    case MemoryLocation::Kind::host: out.type = CU_MEM_LOCATION_TYPE_HOST; break;
    case MemoryLocation::Kind::host_numa:
      out.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
      out.id = loc.id;
      break;
    case MemoryLocation::Kind::host_numa_current: out.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT; break;
  }
  return out;
}

std::optional<MemoryLocation> from_driver(int type, int id) {
  switch (type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: return MemoryLocation::device(id);
    case CU_MEM_LOCATION_TYPE_HOST: return MemoryLocation::host();
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: return MemoryLocation{MemoryLocation::Kind::host_numa, id};
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return MemoryLocation{MemoryLocation::Kind::host_numa_current, 0};
    default: return std::nullopt;  // INVALID: none set
  }
}

int range_int(const ManagedRange& r, CUmem_range_attribute attr) {
  int value = 0;
  NANOCUDA_CALL(cuMemRangeGetAttribute, [&] { return "managed range at " + hex(r.ptr); }, &value, sizeof value, attr,
                r.ptr, r.size);
  return value;
}

// The batch calls' location table: one location for all, or one per range.
struct LocationTable {
  std::vector<CUmemLocation> locations;
  std::vector<std::size_t> first_index;
};

LocationTable location_table(std::size_t ranges, const std::vector<MemoryLocation>& locations, const char* call) {
  if (locations.size() != 1 && locations.size() != ranges)
    throw ValueError(std::string(call) + ": " + std::to_string(locations.size()) + " locations for " +
                     std::to_string(ranges) + " buffers; the length must be 1 or the number of buffers");
  LocationTable t;
  for (std::size_t i = 0; i < locations.size(); ++i) {
    t.locations.push_back(to_driver(locations[i], call));
    t.first_index.push_back(i);
  }
  return t;
}

}  // namespace

std::string MemoryLocation::describe() const {
  switch (kind) {
    case Kind::device: return "device " + std::to_string(id);
    case Kind::host: return "the host";
    case Kind::host_numa: return "host NUMA node " + std::to_string(id);
    case Kind::host_numa_current: return "the calling thread's host NUMA node";
  }
  return "?";
}

void check_managed(CUdeviceptr ptr, const char* call) {
  AddressInfo info = describe_address(ptr, call);
  if (info.kind != AddressInfo::Kind::managed && info.kind != AddressInfo::Kind::unknown)
    throw ValueError(std::string(call) + ": the memory at " + hex(ptr) +
                     " is not a managed-memory allocation (cuMemAllocManaged or a ManagedMemoryResource)");
}

void prefetch_batch(const std::vector<ManagedRange>& ranges, const std::vector<MemoryLocation>& locations,
                    StreamRef stream, const char* call) {
  LocationTable t = location_table(ranges.size(), locations, call);
  const auto& api = detail::driver();
  CurrentContext guard(stream.context());
  if (!detail::entry_point_available(api.cuMemPrefetchBatchAsync)) {  // a CUDA 12 driver: one at a time
    for (std::size_t i = 0; i < ranges.size(); ++i)
      NANOCUDA_CALL(cuMemPrefetchAsync, [&] { return std::string(call) + ": buffer " + std::to_string(i); },
                    ranges[i].ptr, ranges[i].size, t.locations[t.locations.size() == 1 ? 0 : i], 0u, stream.handle());
    return;
  }
  std::vector<CUdeviceptr> ptrs;
  std::vector<std::size_t> sizes;
  for (const auto& r : ranges) ptrs.push_back(r.ptr), sizes.push_back(r.size);
  NANOCUDA_CALL(cuMemPrefetchBatchAsync, [&] { return std::string(call) + " on " + stream.describe(); }, ptrs.data(),
                sizes.data(), ptrs.size(), t.locations.data(), t.first_index.data(), t.locations.size(), 0ull,
                stream.handle());
}

void discard_batch(const std::vector<ManagedRange>& ranges, StreamRef stream, const char* call) {
  std::vector<CUdeviceptr> ptrs;
  std::vector<std::size_t> sizes;
  for (const auto& r : ranges) ptrs.push_back(r.ptr), sizes.push_back(r.size);
  CurrentContext guard(stream.context());
  NANOCUDA_CALL(cuMemDiscardBatchAsync, [&] { return std::string(call) + " on " + stream.describe(); }, ptrs.data(),
                sizes.data(), ptrs.size(), 0ull, stream.handle());
}

void discard_prefetch_batch(const std::vector<ManagedRange>& ranges, const std::vector<MemoryLocation>& locations,
                            StreamRef stream, const char* call) {
  LocationTable t = location_table(ranges.size(), locations, call);
  std::vector<CUdeviceptr> ptrs;
  std::vector<std::size_t> sizes;
  for (const auto& r : ranges) ptrs.push_back(r.ptr), sizes.push_back(r.size);
  CurrentContext guard(stream.context());
  NANOCUDA_CALL(cuMemDiscardAndPrefetchBatchAsync, [&] { return std::string(call) + " on " + stream.describe(); },
                ptrs.data(), sizes.data(), ptrs.size(), t.locations.data(), t.first_index.data(), t.locations.size(),
                0ull, stream.handle());
}

CUmemcpySrcAccessOrder src_access_order_from_name(std::string_view name, const char* call) {
  if (name == "stream") return CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  if (name == "during_api_call") return CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
  if (name == "any") return CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
  throw ValueError(call, "unknown source access order '" + std::string(name) +
                             "' (expected 'stream', 'during_api_call' or 'any')");
}

void copy_batch(const std::vector<BatchCopy>& copies, const std::vector<BatchCopyAttributes>& attrs,
                StreamRef stream, const char* call) {
  if (copies.empty()) return;
  if (attrs.size() != 1 && attrs.size() != copies.size())
    throw ValueError(std::string(call) + ": " + std::to_string(attrs.size()) + " options for " +
                     std::to_string(copies.size()) + " copies; the length must be 1 or the number of copies");
  for (std::size_t i = 0; i < copies.size(); ++i)
    if (copies[i].size != copies[i].dst_size)
      throw ValueError(std::string(call) + ": copy " + std::to_string(i) + " has a " + std::to_string(copies[i].size) +
                       "-byte source and a " + std::to_string(copies[i].dst_size) +
                       "-byte destination; the sizes must match");
  if (is_capturing(stream))
    throw std::runtime_error(std::string(call) + ": " + stream.describe() +
                             " is capturing a graph, and a batched copy has no graph node; capture "
                             "Buffer.copy_to per buffer instead");
  // Runs of equal attributes share one driver entry (attrsIdxs holds each run's first copy).
  std::vector<CUmemcpyAttributes> table;
  std::vector<std::size_t> first_index;
  bool sync_after = false;
  auto attr = [&](std::size_t i) -> const BatchCopyAttributes& { return attrs[attrs.size() == 1 ? 0 : i]; };
  for (std::size_t i = 0; i < copies.size(); ++i) {
    const BatchCopyAttributes& a = attr(i);
    sync_after = sync_after || a.src_access_order == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    if (i > 0 && a == attr(i - 1)) continue;
    CUmemcpyAttributes d{};
    d.srcAccessOrder = a.src_access_order;
    if (a.src_hint) d.srcLocHint = to_driver(*a.src_hint, call);
    if (a.dst_hint) d.dstLocHint = to_driver(*a.dst_hint, call);
    d.flags = a.prefer_overlap ? CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE : CU_MEMCPY_FLAG_DEFAULT;
    table.push_back(d);
    first_index.push_back(i);
  }
  const auto& api = detail::driver();
  CurrentContext guard(stream.context());
  CUstream h = stream.handle();
  if (!detail::entry_point_available(api.cuMemcpyBatchAsync) || h == nullptr || h == CU_STREAM_LEGACY) {
    for (std::size_t i = 0; i < copies.size(); ++i)
      NANOCUDA_CALL(cuMemcpyAsync, [&] { return std::string(call) + ": copy " + std::to_string(i); }, copies[i].dst,
                    copies[i].src, copies[i].size, h);
    if (sync_after) NANOCUDA_CALL(cuStreamSynchronize, [&] { return std::string(call) + " on " + stream.describe(); }, h);
    return;
  }
  std::vector<CUdeviceptr> dsts, srcs;
  std::vector<std::size_t> sizes;
  for (const auto& c : copies) dsts.push_back(c.dst), srcs.push_back(c.src), sizes.push_back(c.size);
  NANOCUDA_CALL(cuMemcpyBatchAsync, [&] { return std::string(call) + " on " + stream.describe(); }, dsts.data(),
                srcs.data(), sizes.data(), copies.size(), table.data(), first_index.data(), table.size(), h);
}

void advise(const ManagedRange& range, CUmem_advise advice, const std::optional<MemoryLocation>& location,
            const char* call) {
  bool accessed_by = advice == CU_MEM_ADVISE_SET_ACCESSED_BY || advice == CU_MEM_ADVISE_UNSET_ACCESSED_BY;
  if (accessed_by && location && location->kind != MemoryLocation::Kind::device &&
      location->kind != MemoryLocation::Kind::host)
    throw ValueError(std::string(call) + ": advise SET_ACCESSED_BY does not support location_type='" +
                     (location->kind == MemoryLocation::Kind::host_numa ? "host_numa" : "host_numa_current") +
                     "' (a Device or Host() only)");
  CUmemLocation loc = location ? to_driver(*location, call) : CUmemLocation{};
  // Advice that takes no location (read-mostly) still needs a valid one on CUDA 13's driver:
  // CU_MEM_LOCATION_TYPE_INVALID is CUDA_ERROR_INVALID_VALUE and the host NOT_SUPPORTED (H100,
  // r580), so it names the current device, which the driver then ignores for this advice.
  if (!location) {
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id = Device().ordinal();
  }
  NANOCUDA_CALL(cuMemAdvise, [&] { return std::string(call) + " at " + hex(range.ptr); }, range.ptr, range.size,
                advice, loc);
}

bool range_read_mostly(const ManagedRange& range) {
  return range_int(range, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY) != 0;
}

std::optional<MemoryLocation> range_preferred_location(const ManagedRange& range) {
  int type = range_int(range, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE);
  return from_driver(type, range_int(range, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID));
}

std::optional<MemoryLocation> range_last_prefetch_location(const ManagedRange& range) {
  int type = range_int(range, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE);
  return from_driver(type, range_int(range, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID));
}

std::vector<MemoryLocation> range_accessed_by(const ManagedRange& range) {
  // One int per device (and the host, CU_DEVICE_CPU = -1); unused slots read CU_DEVICE_INVALID (-2).
  std::vector<int> ids(static_cast<std::size_t>(Device::count()) + 1, -2);
  NANOCUDA_CALL(cuMemRangeGetAttribute, [&] { return "managed range at " + hex(range.ptr); }, ids.data(),
                ids.size() * sizeof(int), CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, range.ptr, range.size);
  std::vector<MemoryLocation> out;
  for (int id : ids) {
    if (id == -1) out.push_back(MemoryLocation::host());
    else if (id >= 0) out.push_back(MemoryLocation::device(id));
  }
  return out;
}

}  // namespace nanocuda
