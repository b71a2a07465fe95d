// Pool IPC shared by device and host pools: exporting a pool and its buffers, mapping them in another process, and the registry of mapped pools.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "nanocuda/core/ipc_allocation_handle.h"
#include "nanocuda/core/ipc_buffer_descriptor.h"
#include "nanocuda/core/memory_resource.h"
#include "nanocuda/core/stream_ref.h"

namespace nanocuda {

class Buffer;

using PoolUuid = std::array<unsigned char, 16>;

// Where a pool lives decides how it is shared: a device pool is reachable from its device
// once imported, a host pool (HOST_NUMA) from no device until access is set, in the exporter
// (create_pool) and again in each importer (an import keeps none of the exporter's settings).
enum class PoolPlace { device, host };

// Random per exportable pool, carried by its exports so an importer maps a pool only once.
[[nodiscard]] PoolUuid random_pool_uuid();
// The 8-4-4-4-12 text form Python's uuid.UUID prints.
[[nodiscard]] std::string format_uuid(const PoolUuid& id);

// cuda.core's words for a pool made without IPC (its users match on them), raised as a
// StateError (Python: both RuntimeError, cuda.core's type, and ValueError).
[[noreturn]] void throw_not_ipc_enabled(const std::string& call, const std::string& owner, const char* remedy);

// One pool's side of IPC. The exporter's part (an owned pool made with IPC) exports the pool
// once and its buffers; the importer's part (a mapped pool) maps buffers, counting the
// imports of each address. The resource holding it keeps the pool, its uuid, the context
// current and its own names for errors; this class holds the rules both kinds share.
class PoolIpc {
 public:
  // The exported pool (cuMemPoolExportToShareableHandle once, then the kept handle).
  [[nodiscard]] const IpcAllocationHandle& allocation_handle(CUmemoryPool pool, const PoolUuid& uuid,
                                                             const std::string& owner);
  void close_handle() noexcept;
  // cuMemPoolExportPointer of one buffer of an exported pool (export the pool first).
  [[nodiscard]] static IpcBufferDescriptor export_pointer(CUdeviceptr ptr, std::size_t size, const PoolUuid& uuid,
                                                          const std::string& what);

  // cuMemPoolImportFromShareableHandle of `fd` (only read; the caller still owns it). A host
  // pool is then made readable and writable by every device. A device import is opened to
  // `device` when the driver reports it closed there: cuda.core lets DeviceMemoryResource map
  // a host pool's handle too, and an import keeps none of the exporter's grants (best effort:
  // a pool the driver will not open stays as imported). `call` names it in errors.
  [[nodiscard]] static CUmemoryPool import_pool(int fd, PoolPlace place, int device, const std::string& call);
  // A Buffer's export and import for both pool kinds (R: DeviceMemoryResource or
  // PinnedMemoryResource, which befriend PoolIpc), so both get the same checks in cuda.core's
  // order: export refuses another resource's Buffer, then a pool without IPC; import refuses
  // a resource without IPC, then a bad descriptor, an unmapped resource, a closed one, another
  // pool's descriptor, and maps the rest (import_pointer). Errors name R::export_buffer /
  // R::import_buffer.
  template <class R>
  [[nodiscard]] static IpcBufferDescriptor export_buffer(R& self, const Buffer& buffer);
  template <class R>
  [[nodiscard]] static Buffer import_buffer(const std::shared_ptr<R>& mapped, const IpcBufferDescriptor& descriptor,
                                            StreamRef stream);

  // What can be checked in a descriptor from another process before the driver sees it.
  static void check_descriptor(const IpcBufferDescriptor& descriptor);
  // The driver says only INVALID_VALUE for a pointer of another pool: say it first, naming both.
  static void check_same_pool(const IpcBufferDescriptor& descriptor, const PoolUuid& uuid, const std::string& owner);
  // cuMemPoolImportPointer into `pool`, counted per address: the driver does not count the
  // imports of one buffer (nvbug 5570902: a second free would unmap it under the first), so a
  // descriptor already mapped here is not given to the driver again (a host pool's driver may
  // refuse a second import) but counted. A size beyond the mapped extent (the smaller answer of
  // the pointer's range attributes and cuMemGetAddressRange) is unmapped again and refused. The
  // caller holds a context current.
  [[nodiscard]] CUdeviceptr import_pointer(CUmemoryPool pool, const IpcBufferDescriptor& descriptor,
                                           StreamRef stream, const std::string& owner);
  // A mapped Buffer is freed: true when it was the last import of `ptr` (the caller frees it
  // and then calls forget_import), false when another import still uses it.
  [[nodiscard]] bool release_import(CUdeviceptr ptr);
  void forget_import(CUdeviceptr ptr);

 private:
  std::unique_ptr<IpcAllocationHandle> handle_;
  struct Import {
    int count = 0;
    std::size_t extent = 0;  // bytes mapped from the address on (0: unknown)
  };
  std::mutex imports_mutex_;
  std::map<CUdeviceptr, Import> imports_;
  // The exporter's bytes of each live import: the same buffer imported again maps to its address.
  std::map<std::array<unsigned char, sizeof(CUmemPoolPtrExportData)>, CUdeviceptr> by_export_;
};

// The process's mapped pools, by their exporter's uuid, of either kind (cuda.core's registry).
// find: the live one or null. add: registers `mr` unless a live one is there already, and
// returns the one registered. remove: only if `mr` is the one registered.
[[nodiscard]] std::shared_ptr<MemoryResource> find_mapped_pool(const PoolUuid& uuid);
[[nodiscard]] std::shared_ptr<MemoryResource> add_mapped_pool(const std::shared_ptr<MemoryResource>& mr,
                                                              const PoolUuid& uuid);
void remove_mapped_pool(const PoolUuid& uuid, const MemoryResource* mr) noexcept;
// A pool already mapped here under `uuid`, if it is an `R`; a TypeError when it is of the other
// kind (a host pool's handle given to DeviceMemoryResource.from_allocation_handle: cuda.core's
// type), naming `call`, the registered resource and `kind`.
[[noreturn]] void throw_wrong_pool_kind(const std::string& call, const std::string& registered, const char* kind);
template <class R>
[[nodiscard]] std::shared_ptr<R> mapped_of_kind(const PoolUuid& uuid, const std::string& call, const char* kind) {
  auto any = find_mapped_pool(uuid);
  if (!any) return nullptr;
  if (auto mine = std::dynamic_pointer_cast<R>(any)) return mine;
  throw_wrong_pool_kind(call, any->describe(), kind);
}
// cuda.core's std::runtime_error (Python RuntimeError) "Memory resource <uuid> was not found".
[[noreturn]] void throw_mapped_pool_not_found(const PoolUuid& uuid, const char* how_to_send);

}  // namespace nanocuda
