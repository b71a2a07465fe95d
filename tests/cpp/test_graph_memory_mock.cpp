// GraphMemoryResource on the mock driver: allocation only under capture, frees in and after
// it, the counters and their resets, and DeviceMemoryResource's side of the capture rule.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "nanocuda/core/graph_memory_resource.h"
#include "nanocuda/launch/graph_builder.h"
#include "nanocuda/nanocuda.h"

namespace {

using nanocuda::Buffer;
using nanocuda::Device;
using nanocuda::GraphBuilder;
using nanocuda::GraphMemoryResource;
using nanocuda::Stream;

bool on_mock() { return std::getenv("NANOCUDA_MOCK_CURRENT_DEVICE") != nullptr; }

template <class F>
std::string runtime_error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no std::runtime_error)";
}

TEST(GraphMemoryMock, OneResourcePerDeviceAllocatingOnlyUnderCapture) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Device d(0);
  auto gmr = GraphMemoryResource::for_device(d);
  EXPECT_EQ(gmr, GraphMemoryResource::for_device(Device(0)));
  EXPECT_NE(gmr, GraphMemoryResource::for_device(Device(1)));
  EXPECT_TRUE(gmr->is_device_accessible());
  EXPECT_FALSE(gmr->is_host_accessible());
  EXPECT_EQ(gmr->device_id(), 0);
  Stream s = Stream::create(d);
  EXPECT_EQ(runtime_error_of([&] { (void)gmr->allocate(16, s); }).rfind(
                "GraphMemoryResource cannot perform memory operations on a non-capturing stream.", 0),
            0u);

  auto before = gmr->attributes().used_mem_current;
  GraphBuilder b = GraphBuilder::create(d);
  b.begin_building();
  {
    Buffer inside(gmr, 1024, b.stream());
    EXPECT_EQ(gmr->attributes().used_mem_current, before + 1024);
  }  // freed on the builder's stream: a free node of the capture
  EXPECT_EQ(gmr->attributes().used_mem_current, before);
  Buffer kept(gmr, 512, b.stream());
  // The pool refuses the capture (cuda.core's rule), naming itself.
  nanocuda::DeviceMemoryResource dmr(d);
  EXPECT_NE(runtime_error_of([&] { nanocuda::require_not_capturing(dmr, b.stream()); })
                .find("DeviceMemoryResource(device 0"),
            std::string::npos);
  b.end_building();
  nanocuda::require_not_capturing(dmr, s);  // not capturing: nothing to refuse

  auto a = gmr->attributes();
  EXPECT_EQ(a.used_mem_current, before + 512);
  EXPECT_GE(a.reserved_mem_current, a.used_mem_current);
  kept.close(s);  // graph memory freed outside its graph
  EXPECT_EQ(gmr->attributes().used_mem_current, before);
  gmr->trim();
  EXPECT_EQ(gmr->attributes().reserved_mem_current, gmr->attributes().used_mem_current);
  gmr->reset_used_mem_high();
  gmr->reset_reserved_mem_high();
  a = gmr->attributes();
  EXPECT_EQ(a.used_mem_high, a.used_mem_current);
  EXPECT_EQ(a.reserved_mem_high, a.reserved_mem_current);
}

}  // namespace
