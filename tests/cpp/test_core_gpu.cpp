// Device, stream, event and memory on a real GPU (skipped, with the reason, without one).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "gpu_test.h"
#include "nanocuda/nanocuda.h"

using namespace nanocuda;

TEST(CoreGpu, DeviceIdentity) {
  NANOCUDA_REQUIRE_GPU();
  Device d(0);
  EXPECT_FALSE(d.name().empty());
  EXPECT_EQ(d.uuid_string().rfind("GPU-", 0), 0u);
  EXPECT_EQ(d.uuid_string(false), d.uuid_string().substr(4));
  EXPECT_GT(d.total_memory(), 1u << 30);
  auto [major, minor] = d.compute_capability();
  EXPECT_GE(major, 5);
  EXPECT_EQ(d.multiprocessor_count(), d.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  if (major == 9 && minor == 0) {
    EXPECT_EQ(d.arch(), "90");
    EXPECT_EQ(d.target_arch(), "90a");
  }
  EXPECT_THROW(Device(Device::count()), ValueError);
}

TEST(CoreGpu, CopyRoundTripAndEventTiming) {
  NANOCUDA_REQUIRE_GPU();
  Device d(0);
  Stream s = Stream::create(d);
  const std::size_t n = 1 << 22;
  std::vector<unsigned char> host(n), back(n, 0);
  std::iota(host.begin(), host.end(), 0);
  PinnedBuffer pinned(n, d);
  Buffer a(n, s), b(n, s);
  Event start(d), stop(d);
  start.record(s);
  copy_async(a.ptr(), reinterpret_cast<CUdeviceptr>(host.data()), n, s);
  copy_async(b.ptr(), a.ptr(), n, s);
  copy_async(reinterpret_cast<CUdeviceptr>(pinned.ptr()), b.ptr(), n, s);
  stop.record(s);
  stop.sync();
  EXPECT_TRUE(stop.query());
  EXPECT_TRUE(s.query());
  std::memcpy(back.data(), pinned.ptr(), n);
  EXPECT_EQ(back, host);
  float ms = stop.elapsed_time_since(start);
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 1000.0f);
}

TEST(CoreGpu, TypedCopiesAndTheDefaultDevice) {
  NANOCUDA_REQUIRE_GPU();
  Device(0).set_current();
  EXPECT_EQ(Device().ordinal(), 0);  // the current context's device
  Stream s = Stream::create(Device());
  std::vector<int> host(1000);
  std::iota(host.begin(), host.end(), -7);
  Buffer b = to_buffer(host, s);
  EXPECT_EQ(b.memory_resource(), MemoryResource::for_device(Device(0)));
  EXPECT_EQ(to_vector<int>(b, s), host);
  std::vector<int> back(1000, 0);
  copy_async(back, b, s);
  s.sync();
  EXPECT_EQ(back, host);
  EXPECT_THROW(copy_async(b, std::vector<int>(999), s), ValueError);
}

TEST(CoreGpu, MemsetAndStreamOrdering) {
  NANOCUDA_REQUIRE_GPU();
  Device d(0);
  Stream producer = Stream::create(d), consumer = Stream::create(d);
  Buffer buf(4096, producer);
  memset_async(buf.ptr(), 0xAB, 4096, producer);
  consumer.wait(producer);
  std::vector<unsigned char> host(4096, 0);
  copy_async(reinterpret_cast<CUdeviceptr>(host.data()), buf.ptr(), 4096, consumer);
  consumer.sync();
  for (unsigned char c : host) ASSERT_EQ(c, 0xAB);
}

TEST(CoreGpu, ClosedStreamAndBufferGiveClearErrors) {
  NANOCUDA_REQUIRE_GPU();
  Device d(0);
  Stream s = Stream::create(d);
  Buffer buf(256, s);
  s.close();
  EXPECT_TRUE(s.is_closed());
  try {
    s.sync();
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("closed"), std::string::npos);
  }
  buf.close();  // frees on the legacy stream, since its stream is gone
  EXPECT_THROW((void)buf.ptr(), ValueError);
}

TEST(CoreGpu, ForeignStreamRefIsNotDestroyed) {
  NANOCUDA_REQUIRE_GPU();
  Device d(0);
  Stream owner = Stream::create(d);
  {
    StreamRef view = StreamRef::from_handle(owner.handle());  // device read from the stream's context
    EXPECT_FALSE(view.owner().has_value());
    EXPECT_EQ(view.device().ordinal(), 0);
    view.sync();
  }
  EXPECT_NO_THROW(owner.sync());  // still alive after the foreign view went away
}

TEST(CoreGpu, DeallocationStreamAndResourceQueries) {
  NANOCUDA_REQUIRE_GPU();
  Device d(0);
  Stream a = Stream::create(d), b = Stream::create(d);
  auto pool = MemoryResource::for_device(d);
  Buffer buf(pool, 1 << 20, a);
  EXPECT_FALSE(buf.is_managed());
  EXPECT_FALSE(buf.is_mapped());
  buf.set_deallocation_stream(b);
  EXPECT_TRUE(buf.stream() == b);
  buf.close();  // in b's order
  b.sync();
  EXPECT_THROW(buf.set_deallocation_stream(a), ValueError);  // closed
  Buffer other(pool, 64, a);
  Stream gone = Stream::create(d);
  gone.close();
  EXPECT_THROW(other.set_deallocation_stream(gone), ValueError);
  auto managed = std::make_shared<ManagedMemoryResource>(d);
  EXPECT_TRUE(managed->is_managed());
  // The shared owner: allocations share the resource's one shared_ptr.
  EXPECT_EQ(pool->weak_from_this().lock(), pool);
}
