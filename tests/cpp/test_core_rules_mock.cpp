// Rules the core owns for both languages: Buffer copies, the default stream, green streams, hidden waits.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "nanocuda/core/green_context.h"
#include "nanocuda/core/wait_hooks.h"
#include "mock_values.h"
#include "nanocuda/nanocuda.h"

namespace {

using nanocuda::Buffer;
using nanocuda::Device;
using nanocuda::Stream;
using nanocuda::StreamRef;

using nanocuda_test::mock_value;
using nanocuda_test::on_mock;
unsigned long long peer_copies() { return mock_value<unsigned long long>("nanocuda_mock_peer_copies"); }
void* last_stream() { return mock_value<void*>("nanocuda_mock_last_stream"); }

// The call() and what() of the ValueError `f` throws.
template <class F>
std::pair<std::string, std::string> value_error_of(F&& f) {
  try {
    f();
  } catch (const nanocuda::ValueError& e) {
    return {e.call(), e.what()};
  }
  return {"(no ValueError)", ""};
}

StreamRef stream_on(int device, std::uintptr_t handle) {
  return StreamRef(reinterpret_cast<CUstream>(handle), Device(device));
}

TEST(CoreRulesMock, BufferCloseRefusesAClosedStreamItIsGiven) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Stream s = Stream::create(Device(0));
  Stream other = Stream::create(Device(0));
  Buffer b(64, s);
  other.close();
  auto [call, what] = value_error_of([&] { b.close(other); });
  EXPECT_EQ(call, "Buffer::close");
  EXPECT_NE(what.find("the stream is closed"), std::string::npos) << what;
  EXPECT_FALSE(b.is_closed());  // nothing freed
  s.close();
  b.close();  // its own stream closed: freed on the legacy stream
  EXPECT_TRUE(b.is_closed());
}

TEST(CoreRulesMock, BufferCopiesCheckSizesInCppWords) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Buffer a(64, stream_on(0, 0xA10)), small(32, stream_on(0, 0xA10));
  auto [call, what] = value_error_of([&] { a.copy_from(small); });
  EXPECT_EQ(call, "Buffer::copy_from");
  EXPECT_EQ(what, "Buffer::copy_from: the buffers differ in size (32 bytes to 64)");
  std::tie(call, what) = value_error_of([&] { a.copy_to(small); });
  EXPECT_EQ(what, "Buffer::copy_to: the buffers differ in size (64 bytes to 32)");
  std::tie(call, what) = value_error_of([&] { a.copy_from(small, 48, a.stream()); });
  EXPECT_EQ(what, "Buffer::copy_from: size 48 is past the end of the source (32 bytes)");
  std::tie(call, what) = value_error_of([&] { small.copy_from(a, 48, a.stream()); });
  EXPECT_EQ(what, "Buffer::copy_from: size 48 is past the end of the destination (32 bytes)");
  a.close();
  std::tie(call, what) = value_error_of([&] { small.copy_from(a, 16, small.stream()); });
  EXPECT_NE(what.find("closed"), std::string::npos) << what;
}

TEST(CoreRulesMock, BufferCopiesPickPeerOrLocalAndTheDestinationsStream) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  StreamRef s0 = stream_on(0, 0xB10), s1 = stream_on(1, 0xB20);
  Buffer a(64, s0), b(64, s0), c(64, s1);
  const unsigned long long peers = peer_copies();
  a.copy_from(b);  // one device: cuMemcpyAsync on a's stream
  EXPECT_EQ(peer_copies(), peers);
  EXPECT_EQ(last_stream(), static_cast<void*>(s0.raw_handle()));
  b.copy_to(c);  // two devices: cuMemcpyPeerAsync, on the destination's stream
  EXPECT_EQ(peer_copies(), peers + 1);
  EXPECT_EQ(last_stream(), static_cast<void*>(s1.raw_handle()));
  c.copy_from(a, 16, s0);  // a prefix, on the stream given
  EXPECT_EQ(peer_copies(), peers + 2);
  EXPECT_EQ(last_stream(), static_cast<void*>(s0.raw_handle()));
}

TEST(CoreRulesMock, NoStreamMeansTheLegacyStreamOfTheDevice) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  StreamRef d = StreamRef::default_for(Device(1));
  EXPECT_EQ(d, StreamRef::legacy(Device(1)));
  EXPECT_EQ(d.raw_handle(), CU_STREAM_LEGACY);
  EXPECT_EQ(d.device_ordinal(), 1);
  EXPECT_EQ(StreamRef::default_for(Device()).device_ordinal(), 1);  // the mock's current device
}

TEST(CoreRulesMock, GreenContextStreamsAreNonBlocking) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Device d(0);
  nanocuda::SmSplit split = nanocuda::split_sm_resource(nanocuda::device_sm_resource(d), 1, 16);
  nanocuda::Context ctx = nanocuda::create_green_context(d, {split.groups[0]});
  auto [call, what] = value_error_of([&] { (void)Stream::create_green(ctx, 0, /*non_blocking=*/false); });
  EXPECT_EQ(call, "Stream::create_green");
  EXPECT_EQ(what, "Stream::create_green: streams of a green context must be non-blocking (non_blocking = true)");
  Stream s = Stream::create_green(ctx);
  EXPECT_TRUE(s.context().is_green());
  s.close();
  ctx.close();
}

int g_before = 0, g_after = 0;
void* count_before() noexcept {
  ++g_before;
  return &g_before;
}
void count_after(void* token) noexcept {
  if (token == &g_before) ++g_after;
}

TEST(CoreRulesMock, WaitsForTheDeviceRunTheHooks) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  nanocuda::set_wait_hooks({&count_before, &count_after});
  {
    nanocuda::PinnedBuffer closed(64, Device(0)), dropped(64, Device(0));
    closed.close();  // cuMemFreeHost waits for the device
    EXPECT_EQ(g_before, 1);
    EXPECT_EQ(g_after, 1);
  }  // the destructor's free too
  EXPECT_EQ(g_before, 2);
  StreamRef s = stream_on(0, 0xC10);
  s.sync();
  EXPECT_EQ(g_before, 3);
  auto host = std::make_shared<nanocuda::PinnedMemoryResource>(Device(0));  // no pool: freeing waits
  Buffer(host, 64, s).close();  // around the stream sync and cuMemFreeHost, and the sync itself
  EXPECT_EQ(g_before, 5);
  { Buffer device_memory(64, s); }  // stream-ordered: no wait
  EXPECT_EQ(g_before, 5);
  EXPECT_EQ(g_after, 5);
  nanocuda::set_wait_hooks({});
  s.sync();
  EXPECT_EQ(g_before, 5);
}

}  // namespace
