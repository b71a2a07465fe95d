// Pool IPC for device and host pools alike: pool and pointer export/import, import counting, the registry.
#include "nanocuda/core/ipc_pool.h"

#include <cstdint>
#include <cstring>
#include <random>

#include "nanocuda/core/buffer.h"
#include "nanocuda/core/context.h"
#include "nanocuda/core/device_memory_resource.h"
#include "nanocuda/core/memory_pool.h"
#include "nanocuda/core/memory_resource.h"
#include "nanocuda/core/pinned_memory_resource.h"
#include "nanocuda/core/stream.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/driver/deferred_errors.h"

namespace nanocuda {

namespace {

constexpr PoolUuid kNoUuid{};

std::mutex g_mapped_mutex;
std::map<PoolUuid, std::weak_ptr<MemoryResource>> g_mapped;

}  // namespace

PoolUuid random_pool_uuid() {
  std::random_device rd;
  PoolUuid id{};
  for (auto& b : id) b = static_cast<unsigned char>(rd());
  return id;
}

std::string format_uuid(const PoolUuid& id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < id.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[id[i] >> 4];
    out += kHex[id[i] & 15];
  }
  return out;
}

void throw_not_ipc_enabled(const std::string& call, const std::string& owner, const char* remedy) {
  throw StateError(call + ": Memory resource is not IPC-enabled: " + owner + " is not exportable; " + remedy);
}

const IpcAllocationHandle& PoolIpc::allocation_handle(CUmemoryPool pool, const PoolUuid& uuid, const std::string& owner) {
  if (!handle_) {
    int fd = -1;
    NANOCUDA_CALL(cuMemPoolExportToShareableHandle, [&] { return owner; }, &fd, pool,
                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    handle_ = std::make_unique<IpcAllocationHandle>(fd, uuid);
  }
  return *handle_;
}

void PoolIpc::close_handle() noexcept {
  if (handle_) handle_->close();
}

IpcBufferDescriptor PoolIpc::export_pointer(CUdeviceptr ptr, std::size_t size, const PoolUuid& uuid,
                                            const std::string& what) {
  IpcBufferDescriptor d;
  NANOCUDA_CALL(cuMemPoolExportPointer, [&] { return what; }, &d.data, ptr);
  d.size = size;
  d.pool_uuid = uuid;
  return d;
}

namespace {

// A device import of a pool `device` cannot reach (a host pool's handle): grant it read-write.
// Never throws; a refusal leaves the import as it was.
void open_to_device(CUmemoryPool pool, int device) noexcept {
  const auto* api = detail::loaded_driver();
  if (!api || device < 0) return;
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = device;
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  if (api->cuMemPoolGetAccess(&flags, pool, &where) != CUDA_SUCCESS || flags != CU_MEM_ACCESS_FLAGS_PROT_NONE)
    return;
  CUmemAccessDesc desc{};
  desc.location = where;
  desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  (void)api->cuMemPoolSetAccess(pool, &desc, 1);
}

}  // namespace

CUmemoryPool PoolIpc::import_pool(int fd, PoolPlace place, int device, const std::string& call) {
  if (fd < 0)
    throw ValueError(call + ": invalid allocation handle (fd) " + std::to_string(fd) + ": must be non-negative");
  CUmemoryPool pool = nullptr;
  NANOCUDA_CALL(cuMemPoolImportFromShareableHandle,
                [&] { return call + "(fd " + std::to_string(fd) + "): not a pool exported by a live process?"; },
                &pool, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (place == PoolPlace::host) {
    try {
      allow_every_device(pool, call);
    } catch (...) {
      (void)detail::driver().cuMemPoolDestroy(pool);  // the access error is the one to report
      throw;
    }
  } else {
    open_to_device(pool, device);
  }
  return pool;
}

void PoolIpc::check_descriptor(const IpcBufferDescriptor& descriptor) {
  if (descriptor.payload_length < sizeof(CUmemPoolPtrExportData))
    throw ValueError("MemoryResource::import_buffer", "the IPC buffer descriptor's payload is " +
                     std::to_string(descriptor.payload_length) + " bytes; expected at least " +
                     std::to_string(sizeof(CUmemPoolPtrExportData)));
  if (descriptor.size == 0) throw ValueError("MemoryResource::import_buffer", "the IPC buffer descriptor's size is 0");
}

void PoolIpc::check_same_pool(const IpcBufferDescriptor& descriptor, const PoolUuid& uuid, const std::string& owner) {
  if (descriptor.pool_uuid != kNoUuid && uuid != kNoUuid && descriptor.pool_uuid != uuid)
    throw Error(CUDA_ERROR_INVALID_VALUE, "cuMemPoolImportPointer", "MemoryResource::import_buffer",
                "CUDA_ERROR_INVALID_VALUE: the descriptor belongs to pool " + format_uuid(descriptor.pool_uuid) + ", not to " + owner +
                    " (pool " + format_uuid(uuid) + ")");
}

namespace {

using ExportKey = std::array<unsigned char, sizeof(CUmemPoolPtrExportData)>;

ExportKey export_key(const CUmemPoolPtrExportData& data) {
  ExportKey key{};
  std::memcpy(key.data(), &data, key.size());
  return key;
}

// Bytes mapped from `ptr` on, or 0 when the driver says neither way. Both ways are asked and
// the smaller answer kept: a host pool's imported pointer may answer only one of them, or one
// for the pool's whole mapped chunk.
std::size_t mapped_extent(CUdeviceptr ptr) {
  const auto& api = detail::driver();
  auto from = [ptr](CUdeviceptr start, std::size_t range) -> std::size_t {
    return range && start && start <= ptr && ptr - start < range ? range - static_cast<std::size_t>(ptr - start) : 0;
  };
  CUdeviceptr start = 0;
  std::size_t range = 0;
  std::size_t by_attribute = 0, by_range = 0;
  if (api.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, ptr) == CUDA_SUCCESS &&
      api.cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, ptr) == CUDA_SUCCESS)
    by_attribute = from(start, range);
  start = 0;
  range = 0;
  if (api.cuMemGetAddressRange(&start, &range, ptr) == CUDA_SUCCESS) by_range = from(start, range);
  if (!by_attribute || !by_range) return by_attribute ? by_attribute : by_range;
  return by_attribute < by_range ? by_attribute : by_range;
}

}  // namespace

CUdeviceptr PoolIpc::import_pointer(CUmemoryPool pool, const IpcBufferDescriptor& descriptor, StreamRef stream,
                                    const std::string& owner) {
  const ExportKey key = export_key(descriptor.data);
  CUdeviceptr ptr = 0;
  {
    std::lock_guard lock(imports_mutex_);
    if (auto it = by_export_.find(key); it != by_export_.end()) ptr = it->second;
  }
  if (!ptr) {
    CUmemPoolPtrExportData data = descriptor.data;
    NANOCUDA_CALL(cuMemPoolImportPointer,
                  [&] { return "MemoryResource::import_buffer(" + std::to_string(descriptor.size) + " bytes) from " +
                               owner + ": the exporter freed it, or the descriptor is not one it made"; },
                  &ptr, pool, &data);
  }
  std::unique_lock lock(imports_mutex_);
  Import& entry = imports_[ptr];
  if (entry.count == 0) {
    // How far the mapping reaches: a size beyond it (a peer's lie or mistake) would let
    // copies run past the allocation.
    entry.extent = mapped_extent(ptr);
  }
  if (entry.extent && descriptor.size > entry.extent) {
    std::size_t extent = entry.extent;
    if (entry.count == 0) {  // this call mapped it: unmap it again
      imports_.erase(ptr);
      if (CUresult rc = detail::driver().cuMemFreeAsync(ptr, stream.handle()); rc != CUDA_SUCCESS)
        detail::record_deferred_error(rc, "cuMemFreeAsync", "MemoryResource::import_buffer");
    }
    throw ValueError("MemoryResource::import_buffer", "the IPC buffer descriptor's size, " +
                     std::to_string(descriptor.size) + " bytes, exceeds the mapped allocation extent (" +
                     std::to_string(extent) + " bytes)");
  }
  ++entry.count;
  by_export_.emplace(key, ptr);
  return ptr;
}

template <class R>
IpcBufferDescriptor PoolIpc::export_buffer(R& self, const Buffer& buffer) {
  const std::string call = std::string(R::kClassName) + "::export_buffer";
  self.check_open("export");
  if (buffer.memory_resource().get() != &self)
    throw ValueError(call, buffer.describe() + " was not allocated by " + self.describe());
  if (!self.ipc_enabled_ || self.mapped_)
    throw_not_ipc_enabled(call, self.describe(),
                          ("allocate from " + std::string(R::kClassName) + "Options(ipc_enabled=True)").c_str());
  // The driver exports pointers only from a pool that is itself exported (H100: exporting
  // a pointer first gave CUDA_ERROR_INVALID_VALUE), so the pool goes first, once.
  (void)self.allocation_handle();
  CurrentContext guard(*self.device_.context());
  return export_pointer(buffer.ptr(), buffer.size(), self.uuid_, buffer.describe());
}

template <class R>
Buffer PoolIpc::import_buffer(const std::shared_ptr<R>& mapped, const IpcBufferDescriptor& descriptor,
                              StreamRef stream) {
  const std::string call = std::string(R::kClassName) + "::import_buffer";
  // cuda.core's order: a resource without IPC first, then the descriptor (a truncated payload
  // is the error reported), whatever IPC resource it is given to, then the resource's kind.
  if (mapped && !mapped->ipc_enabled_)
    throw_not_ipc_enabled(call, mapped->describe(),
                          ("import through " + std::string(R::kClassName) + ".from_allocation_handle").c_str());
  check_descriptor(descriptor);
  if (!mapped || !mapped->mapped_)
    throw ValueError(call, "the resource must be mapped from the exporting process (" + std::string(R::kClassName) +
                               ".from_allocation_handle)");
  mapped->check_open("import");
  check_same_pool(descriptor, mapped->uuid_, mapped->describe());
  CurrentContext guard(*mapped->device_.context());
  CUdeviceptr ptr = mapped->ipc_.import_pointer(mapped->pool_, descriptor, stream, mapped->describe());
  mapped->keeper_.allocated();
  return Buffer::adopt(ptr, descriptor.size, stream, mapped);
}

template IpcBufferDescriptor PoolIpc::export_buffer(DeviceMemoryResource&, const Buffer&);
template IpcBufferDescriptor PoolIpc::export_buffer(PinnedMemoryResource&, const Buffer&);
template Buffer PoolIpc::import_buffer(const std::shared_ptr<DeviceMemoryResource>&, const IpcBufferDescriptor&,
                                       StreamRef);
template Buffer PoolIpc::import_buffer(const std::shared_ptr<PinnedMemoryResource>&, const IpcBufferDescriptor&,
                                       StreamRef);

bool PoolIpc::release_import(CUdeviceptr ptr) {
  std::lock_guard lock(imports_mutex_);
  auto it = imports_.find(ptr);
  if (it == imports_.end() || it->second.count <= 1) return true;
  --it->second.count;  // another import still uses it
  return false;
}

void PoolIpc::forget_import(CUdeviceptr ptr) {
  std::lock_guard lock(imports_mutex_);
  imports_.erase(ptr);
  std::erase_if(by_export_, [ptr](const auto& kv) { return kv.second == ptr; });
}

std::shared_ptr<MemoryResource> find_mapped_pool(const PoolUuid& uuid) {
  std::lock_guard lock(g_mapped_mutex);
  auto it = g_mapped.find(uuid);
  if (it == g_mapped.end()) return nullptr;
  auto mr = it->second.lock();
  if (!mr) g_mapped.erase(it);
  return mr;
}

std::shared_ptr<MemoryResource> add_mapped_pool(const std::shared_ptr<MemoryResource>& mr, const PoolUuid& uuid) {
  std::lock_guard lock(g_mapped_mutex);
  if (auto it = g_mapped.find(uuid); it != g_mapped.end())
    if (auto existing = it->second.lock()) return existing;
  g_mapped[uuid] = mr;
  return mr;
}

void remove_mapped_pool(const PoolUuid& uuid, const MemoryResource* mr) noexcept {
  std::lock_guard lock(g_mapped_mutex);
  if (auto it = g_mapped.find(uuid); it != g_mapped.end()) {
    auto existing = it->second.lock();
    if (!existing || existing.get() == mr) g_mapped.erase(it);
  }
}

void throw_wrong_pool_kind(const std::string& call, const std::string& registered, const char* kind) {
  throw TypeError(call + ": the handle's pool is mapped here as " + registered + ", not a " + kind +
                  "; import it with its own class's from_allocation_handle");
}

void throw_mapped_pool_not_found(const PoolUuid& uuid, const char* how_to_send) {
  // cuda.core's words (its users match on them); the remedy follows.
  throw std::runtime_error("Memory resource " + format_uuid(uuid) + " was not found (send the resource to this "
                           "process first: pickling it through multiprocessing, or " + std::string(how_to_send) + ")");
}

}  // namespace nanocuda
