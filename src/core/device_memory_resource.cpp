// Stream-ordered pools: the device's current one or a new one, their counters, peer access
// and their export to other processes.
#include "nanocuda/core/device_memory_resource.h"

#include <cstdint>

#include "nanocuda/core/buffer.h"
#include "nanocuda/core/graph_memory_resource.h"
#include "nanocuda/core/peer_access.h"
#include "nanocuda/core/stream.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace {
constexpr std::array<unsigned char, 16> kNoUuid{};
}  // namespace

DeviceMemoryResource::DeviceMemoryResource(const Device& device, CUmemoryPool pool, bool owned,
                                           bool ipc, bool mapped)
    : device_(device), pool_(pool), owned_(owned), ipc_enabled_(ipc), mapped_(mapped) {}

DeviceMemoryResource::DeviceMemoryResource(const Device& device) : device_(device) {
  NANOCUDA_CALL(cuDeviceGetMemPool, [&] { return "device " + std::to_string(device.ordinal()); },
                &pool_, device.handle());
}

DeviceMemoryResource::DeviceMemoryResource(const Device& device, const DeviceMemoryResourceOptions& options)
    : device_(device), owned_(true), ipc_enabled_(options.ipc_enabled), uuid_(random_pool_uuid()) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = options.ipc_enabled ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device.ordinal();
  props.maxSize = options.max_size;
  CurrentContext guard(*device.context());
  NANOCUDA_CALL(cuMemPoolCreate, [&] { return "DeviceMemoryResource(device " + std::to_string(device.ordinal()) + ")"; },
                &pool_, &props);
  if (options.release_threshold) set_release_threshold(options.release_threshold);
}

std::shared_ptr<DeviceMemoryResource> DeviceMemoryResource::import_pool(const Device& device, int fd) {
  CurrentContext guard(*device.context());
  CUmemoryPool pool = PoolIpc::import_pool(fd, PoolPlace::device, device.ordinal(),
                                           "DeviceMemoryResource::from_allocation_handle on device " +
                                               std::to_string(device.ordinal()));
  return std::shared_ptr<DeviceMemoryResource>(new DeviceMemoryResource(device, pool, true, true, true));
}

std::shared_ptr<DeviceMemoryResource> DeviceMemoryResource::from_allocation_handle(
    const Device& device, const IpcAllocationHandle& handle) {
  if (handle.uuid() != kNoUuid)  // one mapping per pool and process
    if (auto mr = mapped_of_kind<DeviceMemoryResource>(handle.uuid(), "DeviceMemoryResource::from_allocation_handle",
                                                       "DeviceMemoryResource"))
      return mr;
  auto mr = import_pool(device, handle.fd());
  return handle.uuid() == kNoUuid ? mr : register_mapped(mr, handle.uuid());
}

std::shared_ptr<DeviceMemoryResource> DeviceMemoryResource::from_allocation_fd(const Device& device, int fd) {
  return import_pool(device, fd);
}

std::shared_ptr<DeviceMemoryResource> DeviceMemoryResource::register_mapped(
    const std::shared_ptr<DeviceMemoryResource>& mr, const std::array<unsigned char, 16>& uuid) {
  if (!mr || !mr->mapped_)
    throw ValueError("DeviceMemoryResource::register_mapped", "only a mapped resource (from_allocation_handle) is "
                     "registered; " + (mr ? mr->describe() : std::string("None")) + " is not one");
  if (auto existing = find_mapped(uuid)) return existing;
  if (mr->uuid_ != kNoUuid && mr->uuid_ != uuid)
    throw ValueError("DeviceMemoryResource::register_mapped", mr->describe() + " is the mapping of pool " +
                     format_uuid(mr->uuid_) + ", not of " + format_uuid(uuid));
  auto registered = add_mapped_pool(mr, uuid);
  if (registered == mr) mr->uuid_ = uuid;
  auto same = std::dynamic_pointer_cast<DeviceMemoryResource>(registered);
  if (!same)
    throw ValueError("DeviceMemoryResource::register_mapped", "pool " + format_uuid(uuid) + " is registered as " +
                     registered->describe() + ", not as a DeviceMemoryResource");
  return same;
}

std::shared_ptr<DeviceMemoryResource> DeviceMemoryResource::find_mapped(const std::array<unsigned char, 16>& uuid) {
  return std::dynamic_pointer_cast<DeviceMemoryResource>(find_mapped_pool(uuid));
}

std::shared_ptr<DeviceMemoryResource> DeviceMemoryResource::from_registry(const std::array<unsigned char, 16>& uuid) {
  auto mr = find_mapped(uuid);
  if (!mr) throw_mapped_pool_not_found(uuid, "DeviceMemoryResource::from_allocation_handle");
  return mr;
}

DeviceMemoryResource::~DeviceMemoryResource() {
  if (!owned_) return;
  destroy_pool(std::exchange(pool_, nullptr));
  destroy_pool(keeper_.take());
}

void DeviceMemoryResource::destroy_pool(CUmemoryPool pool) noexcept {
  const auto* api = detail::loaded_driver();
  if (!pool || !api) return;
  try {
    // The pool outlives any one context, but the driver wants one current to destroy it (a
    // finalizer or a thread that never touched CUDA has none); the device's own, restored after.
    CurrentContext guard(*device_.context());
    if (CUresult rc = api->cuMemPoolDestroy(pool); rc != CUDA_SUCCESS)
      detail::record_deferred_error(rc, "cuMemPoolDestroy", "DeviceMemoryResource");
  } catch (const Error& e) {
    detail::record_deferred_error(e.code(), "cuMemPoolDestroy", "DeviceMemoryResource");
  } catch (...) {
    detail::record_deferred_error(CUDA_ERROR_UNKNOWN, "cuMemPoolDestroy", "DeviceMemoryResource");
  }
}

void DeviceMemoryResource::check_open(const char* call) const {
  if (!pool_) throw ValueError(std::string("DeviceMemoryResource.") + call + ": " + describe() + " is closed");
}

CUmemoryPool DeviceMemoryResource::handle() const {
  check_open("handle");
  return pool_;
}

CUdeviceptr DeviceMemoryResource::allocate(std::size_t size, StreamRef stream) {
  if (!pool_) [[unlikely]] check_open("allocate");
  // cuda.core's exact words (a TypeError): its users match on them.
  if (mapped_) [[unlikely]]
    throw TypeError("Cannot allocate from a mapped IPC-enabled memory resource");
  if (stream.device_ordinal() != device_.ordinal()) [[unlikely]]
    check_same_device("DeviceMemoryResource::allocate", "the stream", stream.device_ordinal(),
                      "the resource", device_.ordinal());
  CUstream order = stream.handle();
  CUdeviceptr ptr = 0;
  CUresult rc;
  if (stream_order_needs_current_context(order)) [[unlikely]] {  // an implicit stream
    CurrentContext guard(stream.context());
    rc = detail::driver().cuMemAllocFromPoolAsync(&ptr, size, pool_, order);
  } else {
    rc = detail::driver().cuMemAllocFromPoolAsync(&ptr, size, pool_, order);
  }
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) [[unlikely]] {
    MemoryPoolAttributes a = attributes();
    auto [free, total] = device_.memory_info();
    throw Error(rc, "cuMemAllocFromPoolAsync",
                describe() + ": cannot allocate " + std::to_string(size) + " bytes (" + format_bytes(size) +
                    "); the pool has " + format_bytes(a.used_mem_current) + " in use and " +
                    format_bytes(a.reserved_mem_current) + " reserved; the device has " +
                    format_bytes(free) + " free of " + format_bytes(total));
  }
  // A capture refusing the pool (relaxed or thread-local mode): cuda.core's rule and words.
  if (rc == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) [[unlikely]]
    require_not_capturing(*this, stream);
  detail::check(rc, "cuMemAllocFromPoolAsync",
                [&] { return describe() + ".allocate(" + std::to_string(size) + " bytes) on " + stream.describe(); });
  // Only an owned pool is ever destroyed (close() leaves a current pool alone), so only its
  // Buffers are counted: three atomic operations per allocate+free pair saved on the device's
  // current pool (bench memory).
  if (owned_) keeper_.allocated();
  return ptr;
}

void DeviceMemoryResource::buffer_released() noexcept {
  if (!owned_) return;  // not counted (allocate)
  if (CUmemoryPool pool = keeper_.released()) destroy_pool(pool);  // close() waited for it
}

void DeviceMemoryResource::deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) {
  if (mapped_ && !ipc_.release_import(ptr)) {  // another import still uses it
    buffer_released();
    return;
  }
  {
    CUstream order = stream.handle();
    auto what = [&] { return describe() + ".deallocate(" + std::to_string(size) + " bytes) on " + stream.describe(); };
    if (stream_order_needs_current_context(order)) [[unlikely]] {  // an implicit stream
      CurrentContext guard(stream.context());
      NANOCUDA_CALL(cuMemFreeAsync, what, ptr, order);
    } else {
      NANOCUDA_CALL(cuMemFreeAsync, what, ptr, order);
    }
  }
  if (mapped_) ipc_.forget_import(ptr);  // freed (a failed free leaves the buffer open, still counted)
  buffer_released();
}

std::string DeviceMemoryResource::describe() const {
  std::string kind = mapped_ ? "mapped from another process" : owned_ ? (ipc_enabled_ ? "own pool, IPC" : "own pool") : "current pool";
  return "DeviceMemoryResource(device " + std::to_string(device_.ordinal()) + ", " + kind +
         (pool_ ? "" : ", closed") + ")";
}

MemoryPoolAttributes DeviceMemoryResource::attributes() const {
  check_open("attributes");
  return read_pool_attributes(pool_, describe());
}

void DeviceMemoryResource::set_release_threshold(std::uint64_t bytes) {
  check_open("release_threshold");
  cuuint64_t value = bytes;
  NANOCUDA_CALL(cuMemPoolSetAttribute, [&] { return describe(); }, pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value);
}

void DeviceMemoryResource::trim_to(std::size_t min_bytes_to_keep) {
  check_open("trim_to");
  NANOCUDA_CALL(cuMemPoolTrimTo, [&] { return describe(); }, pool_, min_bytes_to_keep);
}

void DeviceMemoryResource::set_peer_access(const Device& peer, bool enable) {
  check_open("set_peer_access");
  if (peer.ordinal() == device_.ordinal())
    throw ValueError("DeviceMemoryResource::set_peer_access", "device " + std::to_string(peer.ordinal()) +
                     " owns the pool; access from its own device is always on");
  if (enable && !can_access_peer(peer, device_))
    throw ValueError("DeviceMemoryResource::set_peer_access", "device " + std::to_string(peer.ordinal()) +
                     " cannot access device " + std::to_string(device_.ordinal()) +
                     "'s memory (cuDeviceCanAccessPeer is 0: no NVLink/PCIe peer path)");
  CUmemAccessDesc desc{};
  desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  desc.location.id = peer.ordinal();
  desc.flags = enable ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
  NANOCUDA_CALL(cuMemPoolSetAccess, [&] { return describe() + " for device " + std::to_string(peer.ordinal()); },
                pool_, &desc, 1);
}

std::vector<int> DeviceMemoryResource::peer_accessible_by() const {
  check_open("peer_accessible_by");
  std::vector<int> out;
  int n = Device::count();
  for (int d = 0; d < n; ++d) {
    if (d == device_.ordinal()) continue;
    CUmemLocation loc{};
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id = d;
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    NANOCUDA_CALL(cuMemPoolGetAccess, [&] { return describe(); }, &flags, pool_, &loc);
    if (flags != CU_MEM_ACCESS_FLAGS_PROT_NONE) out.push_back(d);
  }
  return out;
}

const IpcAllocationHandle& DeviceMemoryResource::allocation_handle() {
  check_open("get_allocation_handle");
  if (!ipc_enabled_ || mapped_)
    throw_not_ipc_enabled("DeviceMemoryResource::allocation_handle", describe(),
                          "create it with DeviceMemoryResourceOptions(ipc_enabled=True)");
  CurrentContext guard(*device_.context());  // a pickling thread may have no context current
  return ipc_.allocation_handle(pool_, uuid_, describe());
}

// Both pool kinds share one implementation (PoolIpc), so both get the same checks.
IpcBufferDescriptor DeviceMemoryResource::export_buffer(const Buffer& buffer) {
  return PoolIpc::export_buffer(*this, buffer);
}

Buffer DeviceMemoryResource::import_buffer(const std::shared_ptr<DeviceMemoryResource>& mapped,
                                           const IpcBufferDescriptor& descriptor, StreamRef stream) {
  return PoolIpc::import_buffer(mapped, descriptor, stream);
}

void DeviceMemoryResource::close() {
  if (!pool_ || !owned_) return;  // idempotent; a current pool is not ours to destroy
  ipc_.close_handle();
  if (mapped_) remove_mapped_pool(uuid_, this);
  CUmemoryPool pool = keeper_.close(std::exchange(pool_, nullptr));
  if (!pool) return;  // Buffers are still open: the last one destroys the pool (buffer_released)
  CurrentContext guard(*device_.context());  // the caller's thread may have no context current
  NANOCUDA_CALL(cuMemPoolDestroy, [&] { return "DeviceMemoryResource::close(" + describe() + ")"; }, pool);
}

}  // namespace nanocuda
