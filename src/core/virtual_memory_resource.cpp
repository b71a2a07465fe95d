// Virtual memory: reserve an address range, map physical chunks into it, grow in place.
#include "nanocuda/core/virtual_memory_resource.h"

#include <utility>

#include "nanocuda/core/buffer.h"
#include "nanocuda/core/peer_access.h"
#include "nanocuda/core/stream.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace {

CUmemAllocationProp props_for(const Device& device, const VirtualMemoryResourceOptions& o) {
  CUmemAllocationProp prop{};
  prop.type = o.allocation_type;
  prop.location.type = o.location_type;
  prop.location.id = device.ordinal();
  prop.requestedHandleTypes = o.handle_type;
  prop.allocFlags.gpuDirectRDMACapable = o.gpu_direct_rdma ? 1 : 0;
  return prop;
}

std::size_t round_up(std::size_t n, std::size_t g) { return (n + g - 1) / g * g; }

}  // namespace

void VirtualMemoryResource::check_policy(const VirtualMemoryResourceOptions& o, const char* call) {
  if (o.allocation_type != CU_MEM_ALLOCATION_TYPE_PINNED)
    throw ValueError(std::string(call) + ": allocation_type must be pinned (managed VMM allocations are not supported yet)");
  if (o.location_type != CU_MEM_LOCATION_TYPE_DEVICE)
    throw ValueError(std::string(call) + ": location_type must be device (host locations are not supported yet)");
  if (o.handle_type != CU_MEM_HANDLE_TYPE_NONE && o.handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR &&
      o.handle_type != CU_MEM_HANDLE_TYPE_FABRIC)
    throw ValueError(std::string(call) + ": handle_type must be None, posix_fd or fabric on Linux");
}

void VirtualMemoryResource::set_policy(const VirtualMemoryResourceOptions& p) {
  check_policy(p, "VirtualMemoryResource::set_policy(config=)");
  std::lock_guard lock(mutex_);
  options_.allocation_type = p.allocation_type;
  options_.location_type = p.location_type;
  options_.handle_type = p.handle_type;
  options_.granularity = p.granularity;
  options_.gpu_direct_rdma = p.gpu_direct_rdma;
  options_.self_access = p.self_access;
  options_.peer_access = p.peer_access;
}

VirtualMemoryResource::VirtualMemoryResource(const Device& device, VirtualMemoryResourceOptions options)
    : device_(device), options_(std::move(options)) {
  check_policy(options_, "VirtualMemoryResource");
  for (int peer : options_.peers) {
    Device p(peer);  // checks the ordinal
    if (peer == device.ordinal())
      throw ValueError("VirtualMemoryResourceOptions::peers", "device " + std::to_string(peer) + " is the resource's own device");
    if (!can_access_peer(p, device_))
      throw ValueError("VirtualMemoryResource: device " + std::to_string(peer) + " cannot access device " +
                       std::to_string(device.ordinal()) + "'s memory (cuDeviceCanAccessPeer is 0)");
  }
}

VirtualMemoryResource::~VirtualMemoryResource() {
  // Buffers hold the resource, so nothing is left here unless adopted pointers leaked.
  std::lock_guard lock(mutex_);
  for (auto& [base, range] : ranges_) release(base, range);
}

std::size_t VirtualMemoryResource::granularity() const {
  CUmemAllocationProp prop = props_for(device_, options_);
  std::size_t g = 0;
  NANOCUDA_CALL(cuMemGetAllocationGranularity, [&] { return describe(); }, &g, &prop, options_.granularity);
  if (g == 0) throw Error(CUDA_ERROR_UNKNOWN, "cuMemGetAllocationGranularity", describe(), "the driver reported 0");
  return g;
}

std::string VirtualMemoryResource::describe() const {
  return "VirtualMemoryResource(device " + std::to_string(device_.ordinal()) + ")";
}

void VirtualMemoryResource::set_access(CUdeviceptr ptr, std::size_t size) const {
  std::vector<CUmemAccessDesc> desc(1 + options_.peers.size());
  for (std::size_t i = 0; i < desc.size(); ++i) {
    desc[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc[i].location.id = i == 0 ? device_.ordinal() : options_.peers[i - 1];
    desc[i].flags = i == 0 ? options_.self_access : options_.peer_access;
  }
  NANOCUDA_CALL(cuMemSetAccess, [&] { return describe(); }, ptr, size, desc.data(), desc.size());
}

void VirtualMemoryResource::map_chunk(CUdeviceptr base, Range& range, std::size_t size) {
  CUmemAllocationProp prop = props_for(device_, options_);
  CUmemGenericAllocationHandle h = 0;
  NANOCUDA_CALL(cuMemCreate, [&] { return describe() + ": " + format_bytes(size) + " of physical memory"; },
                &h, size, &prop, 0);
  CUdeviceptr at = base + range.mapped;
  CUresult rc = detail::driver().cuMemMap(at, size, 0, h, 0);
  if (rc != CUDA_SUCCESS) {
    detail::driver().cuMemRelease(h);
    detail::check(rc, "cuMemMap", [&] { return describe(); });
  }
  range.chunks.push_back({h, range.mapped, size});
  range.mapped += size;
  set_access(at, size);  // on failure the chunk is in `range` and released with it
}

void VirtualMemoryResource::release(CUdeviceptr base, Range& range) noexcept {
  const auto* api = detail::loaded_driver();
  if (!api) return;
  for (auto& c : range.chunks) {
    if (CUresult rc = api->cuMemUnmap(base + c.offset, c.size); rc != CUDA_SUCCESS)
      detail::record_deferred_error(rc, "cuMemUnmap", "VirtualMemoryResource");
    if (CUresult rc = api->cuMemRelease(c.handle); rc != CUDA_SUCCESS)
      detail::record_deferred_error(rc, "cuMemRelease", "VirtualMemoryResource");
  }
  range.chunks.clear();
  if (CUresult rc = api->cuMemAddressFree(base, range.reserved); rc != CUDA_SUCCESS)
    detail::record_deferred_error(rc, "cuMemAddressFree", "VirtualMemoryResource");
}

CUdeviceptr VirtualMemoryResource::allocate(std::size_t size, StreamRef stream) {
  (void)stream;  // mapping is synchronous
  CurrentContext guard(*device_.context());
  std::size_t g = granularity();
  std::size_t need = round_up(size, g);
  std::size_t reserve = round_up(std::max(options_.reserve_size, need), g);
  CUdeviceptr base = 0;
  NANOCUDA_CALL(cuMemAddressReserve, [&] { return describe() + ": reserving " + format_bytes(reserve) + " of address space"; },
                &base, reserve, 0, 0, 0);
  Range range;
  range.reserved = reserve;
  try {
    map_chunk(base, range, need);
  } catch (...) {
    release(base, range);  // transactional: nothing is left behind
    throw;
  }
  std::lock_guard lock(mutex_);
  ranges_[base] = std::move(range);
  return base;
}

void VirtualMemoryResource::deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) {
  Range range;
  {
    std::lock_guard lock(mutex_);
    auto it = ranges_.find(ptr);
    if (it == ranges_.end())
      throw ValueError(describe() + ".deallocate: 0x" + std::to_string(ptr) + " (" + std::to_string(size) +
                       " bytes) is not a live allocation of this resource (freed twice?)");
    range = std::move(it->second);
    ranges_.erase(it);
  }
  stream.sync();  // unmapping is immediate: let the queued work finish first
  CurrentContext guard(*device_.context());
  release(ptr, range);
  if (detail::has_deferred_errors()) detail::rethrow_deferred_error();
}

void VirtualMemoryResource::grow(Buffer& buffer, std::size_t new_size) {
  if (buffer.memory_resource().get() != this)
    throw ValueError("VirtualMemoryResource::grow", buffer.describe() + " was not allocated by " + describe());
  CUdeviceptr base = buffer.ptr();
  if (new_size <= buffer.size()) return;  // cuda.core: the same or a smaller size keeps the buffer as it is
  std::lock_guard lock(mutex_);
  Range& range = ranges_.at(base);
  if (new_size > range.reserved)
    throw ValueError("VirtualMemoryResource::grow", std::to_string(new_size) + " bytes (" +
                     format_bytes(new_size) + ") is past the buffer's reservation of " + format_bytes(range.reserved) +
                     "; raise VirtualMemoryResourceOptions::reserve_size");
  CurrentContext guard(*device_.context());
  std::size_t need = round_up(new_size, granularity());
  if (need > range.mapped) map_chunk(base, range, need - range.mapped);
  buffer.size_ = new_size;
}

void VirtualMemoryResource::add_peer(const Device& peer) {
  if (peer.ordinal() == device_.ordinal())
    throw ValueError("VirtualMemoryResource::add_peer", "device " + std::to_string(peer.ordinal()) + " is the resource's own device");
  if (!can_access_peer(peer, device_))
    throw ValueError("VirtualMemoryResource::add_peer", "device " + std::to_string(peer.ordinal()) + " cannot access device " +
                     std::to_string(device_.ordinal()) + "'s memory (cuDeviceCanAccessPeer is 0)");
  std::lock_guard lock(mutex_);
  for (int p : options_.peers)
    if (p == peer.ordinal()) return;
  options_.peers.push_back(peer.ordinal());
  CurrentContext guard(*device_.context());
  for (auto& [base, range] : ranges_) set_access(base, range.mapped);
}

}  // namespace nanocuda
