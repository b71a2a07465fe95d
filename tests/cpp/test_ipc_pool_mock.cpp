// The IPC piece device and host pools share (PoolIpc, the mapped-pool registry), through both resource kinds, on the mock driver.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "nanocuda/nanocuda.h"
#include "nanocuda/core/ipc_pool.h"
#include "nanocuda/core/pinned_memory_resource.h"

namespace {

using nanocuda::Buffer;
using nanocuda::Device;
using nanocuda::DeviceMemoryResource;
using nanocuda::IpcAllocationHandle;
using nanocuda::IpcBufferDescriptor;
using nanocuda::PinnedMemoryResource;
using nanocuda::PinnedMemoryResourceOptions;
using nanocuda::PoolIpc;
using nanocuda::Stream;

bool on_mock() { return std::getenv("NANOCUDA_MOCK_CURRENT_DEVICE") != nullptr; }

// A counter of the mock (the library nanocuda loaded: dlopen of the same path gives the same copy).
unsigned long long mock_counter(const char* name) {
  void* lib = dlopen(std::getenv("NANOCUDA_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return ~0ull;
  auto* n = static_cast<unsigned long long*>(dlsym(lib, name));
  unsigned long long v = n ? *n : ~0ull;
  dlclose(lib);
  return v;
}
// cuMemPoolSetAccess grants on imported host pools; cuMemPoolImportPointer calls.
unsigned long long imported_host_access() { return mock_counter("nanocuda_mock_imported_host_access"); }
unsigned long long pointer_imports() { return mock_counter("nanocuda_mock_pointer_imports"); }

std::shared_ptr<PinnedMemoryResource> ipc_pinned(const Device& d) {
  PinnedMemoryResourceOptions o;
  o.ipc_enabled = true;
  o.max_size = 1 << 21;
  return std::make_shared<PinnedMemoryResource>(d, o);
}

TEST(IpcPoolMock, APinnedPoolExportsItselfOnceAndItsBuffersWithItsUuid) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Device d(0);
  Stream s = Stream::create(d);
  auto mr = ipc_pinned(d);
  EXPECT_TRUE(mr->is_ipc_enabled());
  EXPECT_FALSE(mr->is_mapped());
  EXPECT_GE(mr->numa_id(), 0);  // IPC places a host pool on a NUMA node
  EXPECT_NE(mr->uuid(), nanocuda::PoolUuid{});
  const IpcAllocationHandle& h = mr->allocation_handle();
  EXPECT_GE(h.fd(), 0);
  EXPECT_EQ(h.uuid(), mr->uuid());
  EXPECT_EQ(&mr->allocation_handle(), &h);  // exported once, kept
  Buffer b(mr, 64, s);
  IpcBufferDescriptor desc = mr->export_buffer(b);
  EXPECT_EQ(desc.size, 64u);
  EXPECT_EQ(desc.pool_uuid, mr->uuid());
  b.close();
  mr->close();
  EXPECT_TRUE(h.is_closed());  // close() closes the exported descriptor too
}

TEST(IpcPoolMock, APoolWithoutIpcSaysSoInCudaCoresWords) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Device d(0);
  auto plain = std::make_shared<PinnedMemoryResource>(d, PinnedMemoryResourceOptions{});
  try {
    (void)plain->allocation_handle();
    FAIL() << "a pool without IPC exported";
  } catch (const nanocuda::StateError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("PinnedMemoryResource::allocation_handle: Memory resource is not IPC-enabled"),
              std::string::npos) << what;
    EXPECT_NE(what.find("PinnedMemoryResourceOptions(ipc_enabled=True)"), std::string::npos) << what;
  }
  // Importing into a resource without IPC is refused before the descriptor is looked at.
  IpcBufferDescriptor empty = IpcBufferDescriptor::from_payload("", 0);
  EXPECT_THROW((void)PinnedMemoryResource::import_buffer(plain, empty, Stream::create(d)), nanocuda::StateError);
}

TEST(IpcPoolMock, AnImportedHostPoolIsOpenedToEveryDeviceAndMapsEachAddressOnce) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Device d(0);
  Stream s = Stream::create(d);
  auto mr = ipc_pinned(d);
  Buffer b(mr, 64, s);
  IpcBufferDescriptor desc = mr->export_buffer(b);
  int fd = dup(mr->allocation_handle().fd());  // as another process would receive it
  unsigned long long before = imported_host_access();
  IpcAllocationHandle received(fd, mr->uuid());
  // The exporter's own process has no mapping of it yet: this import is the mapping.
  auto mapped = PinnedMemoryResource::from_allocation_handle(d, received);
  EXPECT_TRUE(mapped->is_mapped());
  EXPECT_EQ(imported_host_access() - before, static_cast<unsigned long long>(Device::count()));
  EXPECT_EQ(PinnedMemoryResource::from_allocation_handle(d, received), mapped);  // the registry's
  EXPECT_EQ(PinnedMemoryResource::from_registry(mr->uuid()), mapped);
  EXPECT_EQ(DeviceMemoryResource::find_mapped(mr->uuid()), nullptr);  // a host pool, not a device one
  EXPECT_THROW((void)mapped->allocate(64, s), nanocuda::TypeError);
  Buffer first = PinnedMemoryResource::import_buffer(mapped, desc, s);
  Buffer second = PinnedMemoryResource::import_buffer(mapped, desc, s);
  EXPECT_EQ(first.ptr(), second.ptr());  // the driver's one address, counted
  first.close();
  EXPECT_FALSE(second.is_closed());
  second.close();
  IpcBufferDescriptor oversized = desc;
  oversized.size = 1 << 20;  // beyond the mock's 4096-byte extent
  EXPECT_THROW((void)PinnedMemoryResource::import_buffer(mapped, oversized, s), nanocuda::ValueError);
  IpcBufferDescriptor other = desc;
  other.pool_uuid[0] ^= 1;  // another pool's buffer
  EXPECT_THROW((void)PinnedMemoryResource::import_buffer(mapped, other, s), nanocuda::Error);
  mapped->close();
  try {
    (void)PinnedMemoryResource::from_registry(mr->uuid());  // closed: out of the registry
    FAIL() << "a closed mapping stayed registered";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("was not found"), std::string::npos) << e.what();
  }
  b.close();
  mr->close();
}

TEST(IpcPoolMock, DeviceAndHostPoolsShareOneRegistryKeyedByUuid) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Device d(0);
  nanocuda::DeviceMemoryResourceOptions o;
  o.ipc_enabled = true;
  auto dev = std::make_shared<DeviceMemoryResource>(d, o);
  auto pin = ipc_pinned(d);
  IpcAllocationHandle dh(dup(dev->allocation_handle().fd()), dev->uuid());
  IpcAllocationHandle ph(dup(pin->allocation_handle().fd()), pin->uuid());
  unsigned long long before = imported_host_access();
  auto dmapped = DeviceMemoryResource::from_allocation_handle(d, dh);
  EXPECT_EQ(imported_host_access(), before);  // a device pool needs no grant for its own device
  auto pmapped = PinnedMemoryResource::from_allocation_handle(d, ph);
  EXPECT_EQ(nanocuda::find_mapped_pool(dev->uuid()), dmapped);
  EXPECT_EQ(nanocuda::find_mapped_pool(pin->uuid()), pmapped);
  // A handle names its pool's kind through the registry: the other class refuses it (cuda.core: TypeError).
  EXPECT_THROW((void)DeviceMemoryResource::from_allocation_handle(d, ph), nanocuda::TypeError);
  EXPECT_THROW((void)PinnedMemoryResource::from_allocation_handle(d, dh), nanocuda::TypeError);
  // cuda.core lets DeviceMemoryResource map a host pool's bare fd: the import is opened to its device.
  before = imported_host_access();
  int bare = dup(pin->allocation_handle().fd());
  auto host_as_device = DeviceMemoryResource::from_allocation_fd(d, bare);
  close(bare);
  EXPECT_EQ(imported_host_access() - before, 1u);
  host_as_device->close();
  // A mapping is registered only under its own pool's uuid.
  EXPECT_THROW((void)PinnedMemoryResource::register_mapped(pmapped, dev->uuid()), nanocuda::ValueError);
  dmapped->close();
  pmapped->close();
  EXPECT_EQ(nanocuda::find_mapped_pool(dev->uuid()), nullptr);
  dev->close();
  pin->close();
}

std::shared_ptr<DeviceMemoryResource> ipc_device_pool(const Device& d) {
  nanocuda::DeviceMemoryResourceOptions o;
  o.ipc_enabled = true;
  return std::make_shared<DeviceMemoryResource>(d, o);
}

// One buffer imported twice, an oversized descriptor with and without range attributes, and
// the checks before the driver, the same for both pool kinds (PoolIpc::import_buffer).
template <class R, class Make>
void import_rules_of(Make make) {
  Device d(0);
  Stream s = Stream::create(d);
  auto mr = make(d);
  Buffer b(mr, 64, s);
  IpcBufferDescriptor desc = mr->export_buffer(b);
  IpcAllocationHandle received(dup(mr->allocation_handle().fd()), mr->uuid());
  auto mapped = R::from_allocation_handle(d, received);
  unsigned long long before = pointer_imports();
  Buffer first = R::import_buffer(mapped, desc, s);
  Buffer second = R::import_buffer(mapped, desc, s);
  EXPECT_EQ(first.ptr(), second.ptr());
  EXPECT_EQ(pointer_imports() - before, 1u);  // the second import is the first's mapping, counted
  first.close();
  second.close();
  IpcBufferDescriptor oversized = desc;
  oversized.size = 64 * 100;  // beyond the mock's 4096-byte extent
  for (const char* how : {"attribute", "address_range", "chunk"}) {
    setenv("NANOCUDA_MOCK_IPC_RANGE", how, 1);
    try {
      (void)R::import_buffer(mapped, oversized, s);
      ADD_FAILURE() << how << ": an oversized descriptor was imported";
    } catch (const nanocuda::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("exceeds the mapped allocation extent (4096 bytes)"), std::string::npos)
          << e.what();
    }
  }
  unsetenv("NANOCUDA_MOCK_IPC_RANGE");
  Buffer again = R::import_buffer(mapped, desc, s);  // the refused import left nothing counted
  EXPECT_EQ(again.size(), 64u);
  again.close();
  try {
    (void)R::import_buffer(mr, desc, s);  // the exporter's own resource is not a mapping
    ADD_FAILURE() << "an unmapped resource imported";
  } catch (const nanocuda::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(std::string(R::kClassName) + "::import_buffer"), std::string::npos) << e.what();
  }
  Buffer foreign(std::make_shared<nanocuda::PinnedMemoryResource>(d), 64, s);  // not this pool's
  try {
    (void)mr->export_buffer(foreign);
    ADD_FAILURE() << "another resource's buffer was exported";
  } catch (const nanocuda::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("was not allocated by"), std::string::npos) << e.what();
  }
  foreign.close();
  mapped->close();
  b.close();
  mr->close();
}

TEST(IpcPoolMock, BothPoolKindsImportOneBufferOnceAndRefuseOversizedDescriptors) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  import_rules_of<DeviceMemoryResource>(ipc_device_pool);
  import_rules_of<PinnedMemoryResource>(ipc_pinned);
}

TEST(IpcPoolMock, DescriptorsAreCheckedBeforeTheDriver) {
  IpcBufferDescriptor d = IpcBufferDescriptor::from_payload(std::string(8, '\0'), 64);
  try {
    PoolIpc::check_descriptor(d);
    FAIL() << "a truncated payload passed";
  } catch (const nanocuda::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("payload is 8 bytes; expected at least 64"), std::string::npos) << e.what();
  }
  IpcBufferDescriptor zero = IpcBufferDescriptor::from_payload(std::string(64, '\0'), 0);
  EXPECT_THROW(PoolIpc::check_descriptor(zero), nanocuda::ValueError);
  EXPECT_EQ(nanocuda::format_uuid(nanocuda::PoolUuid{}), "00000000-0000-0000-0000-000000000000");
}

}  // namespace
