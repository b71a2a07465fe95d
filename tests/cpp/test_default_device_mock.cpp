// The default-device rule, Buffer(size, stream)'s resource and the typed copies, on the mock driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <span>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nanocuda/driver/deferred_errors.h"
#include "nanocuda/nanocuda.h"

namespace {

using nanocuda::Buffer;
using nanocuda::Device;
using nanocuda::Stream;
using nanocuda::StreamRef;

// ctest sets the mock's two devices with device 1's context current; run by hand, say so.
bool on_mock() { return std::getenv("NANOCUDA_MOCK_CURRENT_DEVICE") != nullptr; }

// Copying into a range of const elements does not compile.
template <class Dst>
concept CanCopyInto = requires(Dst d, const Buffer& b, const Stream& s) { nanocuda::copy_async(d, b, s); };
static_assert(CanCopyInto<std::span<float>> && CanCopyInto<std::vector<int>&>);
static_assert(!CanCopyInto<std::span<const float>> && !CanCopyInto<const std::vector<int>&>);

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const nanocuda::ValueError& e) {
    return e.what();
  }
  return "(no ValueError)";
}

TEST(DefaultDeviceMock, DeviceWithoutOrdinalIsTheCurrentOne) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  EXPECT_EQ(Device::count(), 2);
  EXPECT_EQ(Device::current_ordinal(), 1);
  EXPECT_EQ(Device().ordinal(), 1);
  EXPECT_EQ(Device::current_or_default().ordinal(), 1);
  EXPECT_EQ(Device(0).ordinal(), 0);  // an explicit ordinal still wins
}

TEST(DefaultDeviceMock, BufferGoesThroughTheDevicesMemoryResource) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  StreamRef s = StreamRef::legacy(Device());
  Buffer b(64, s);
  EXPECT_EQ(b.device().ordinal(), 1);
  EXPECT_EQ(b.memory_resource(), nanocuda::MemoryResource::for_device(Device(1)));
  StreamRef s0 = StreamRef::legacy(Device(0));
  Buffer b0(64, s0);
  EXPECT_EQ(b0.memory_resource(), nanocuda::MemoryResource::for_device(Device(0)));
  EXPECT_NE(b0.memory_resource(), b.memory_resource());
}

// for_device's memo (a caller's DeviceCache, or the thread's) is checked against the table's
// version: a replacement made on any thread shows at the next call, and a replaced resource is
// not kept alive by any memo.
TEST(DefaultDeviceMock, ForDeviceMemoFollowsReplacements) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  using nanocuda::MemoryResource;
  struct Fake : MemoryResource {
    CUdeviceptr allocate(std::size_t, nanocuda::StreamRef) override { return 0x10000; }
    void deallocate(CUdeviceptr, std::size_t, nanocuda::StreamRef) override {}
    bool is_device_accessible() const override { return true; }
    bool is_host_accessible() const override { return false; }
    int device_id() const override { return 0; }
  };
  Device d(0);
  MemoryResource::DeviceCache memo;
  auto pool = MemoryResource::for_device(d, memo);
  EXPECT_EQ(MemoryResource::for_device(d, memo), pool);
  EXPECT_EQ(MemoryResource::for_device(d), pool);
  auto fake = std::make_shared<Fake>();
  std::weak_ptr<MemoryResource> replaced = fake;
  std::thread([&] { MemoryResource::set_for_device(d, fake); }).join();
  EXPECT_EQ(MemoryResource::for_device(d, memo), fake);
  EXPECT_EQ(MemoryResource::for_device(d), fake);
  fake.reset();
  MemoryResource::set_for_device(d, nullptr);
  EXPECT_TRUE(replaced.expired());
  auto current = MemoryResource::for_device(d, memo);
  EXPECT_NE(dynamic_cast<nanocuda::DeviceMemoryResource*>(current.get()), nullptr);
  EXPECT_EQ(MemoryResource::for_device(d), current);
}

TEST(DefaultDeviceMock, TypedCopiesCheckSizesAndNameTheCppCall) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  StreamRef s = StreamRef::legacy(Device());
  std::vector<float> host(4, 1.0f);
  Buffer b = nanocuda::to_buffer(host, s);
  EXPECT_EQ(b.size(), 16u);
  nanocuda::copy_async(b, host, s);                   // a vector
  std::array<int, 4> arr{};
  nanocuda::copy_async(arr, b, s);                    // into an array
  EXPECT_EQ(nanocuda::to_vector<float>(b, s).size(), 4u);

  std::vector<float> small(3);
  std::string e = error_of([&] { nanocuda::copy_async(b, small, s); });
  EXPECT_NE(e.find("nanocuda::copy_async(Buffer&, host range, Stream)"), std::string::npos) << e;
  EXPECT_NE(e.find("12 bytes (3 elements of 4 bytes)"), std::string::npos) << e;
  EXPECT_NE(e.find("the Buffer has 16"), std::string::npos) << e;
  e = error_of([&] { nanocuda::copy_async(small, b, s); });
  EXPECT_NE(e.find("nanocuda::copy_async(host range, const Buffer&, Stream)"), std::string::npos) << e;
  e = error_of([&] { (void)nanocuda::to_vector<double>(Buffer(12, s), s); });
  EXPECT_NE(e.find("nanocuda::to_vector<T>(Buffer, Stream)"), std::string::npos) << e;
  EXPECT_NE(e.find("not a whole number of 8-byte elements"), std::string::npos) << e;
  b.close();
  e = error_of([&] { nanocuda::copy_async(b, host, s); });
  EXPECT_NE(e.find("the Buffer is closed"), std::string::npos) << e;
  EXPECT_TRUE(nanocuda::to_buffer(std::vector<int>{}, s).size() == 0);
}

}  // namespace

namespace {

// Public C++ for what only Python had: the driver's path, deferred errors, search folders.
TEST(PublicCppMock, DriverLibraryDeferredErrorsAndSearchFolders) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  EXPECT_EQ(nanocuda::driver_library(), std::getenv("NANOCUDA_LIBCUDA"));
  EXPECT_FALSE(nanocuda::has_deferred_errors());
  nanocuda::check_deferred_errors();  // none: returns
  nanocuda::detail::record_deferred_error(CUDA_ERROR_INVALID_VALUE, "cuMemFreeAsync", "Buffer(16 bytes)");
  EXPECT_TRUE(nanocuda::has_deferred_errors());
  EXPECT_THROW(nanocuda::check_deferred_errors(), nanocuda::Error);
  nanocuda::detail::record_deferred_error(CUDA_ERROR_INVALID_VALUE, "cuEventDestroy", "Event");
  auto taken = nanocuda::take_deferred_errors();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_NE(taken[0].find("cuEventDestroy"), std::string::npos) << taken[0];
  EXPECT_FALSE(nanocuda::has_deferred_errors());

  nanocuda::add_library_search_dirs({"/nanocuda-test/lib"});
  auto dirs = nanocuda::library_search_dirs();
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), "/nanocuda-test/lib"), dirs.end());
}

// Device::push_context (Python's set_current(ctx)) refuses another device's context before
// touching the thread's context stack.
TEST(DefaultDeviceMock, PushContextRefusesAnotherDevicesContext) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  nanocuda::Context other(reinterpret_cast<CUcontext>(0x2000), 1);
  std::string why = error_of([&] { (void)Device(0).push_context(other); });
  EXPECT_NE(why.find("belongs to device 1"), std::string::npos) << why;
}

}  // namespace
