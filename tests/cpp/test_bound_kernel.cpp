// The C++ bound launch: the parameter-buffer owner (CPU), and Kernel::bind / launch(kernel)
// checking arguments and launching on a GPU (skipped, with the reason, without one).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "gpu_test.h"
#include "nanocuda/compile/program.h"
#include "nanocuda/core/buffer.h"
#include "nanocuda/core/copy.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/launch/launcher.h"
#include "nanocuda/launch/param_buffer.h"
#include "nanocuda/launch/param_packer.h"

namespace {

nanocuda::ParamLayout layout_of(std::vector<nanocuda::ParamInfo> params) {
  nanocuda::ParamLayout l;
  l.params = std::move(params);
  return l;
}

TEST(ParamBuffer, AlignedAndPointedAtEveryOffset) {
  auto l = layout_of({{0, 4}, {8, 8}, {16, 16}, {32, 1}});
  nanocuda::ParamBuffer b(l);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 16, 0u);
  EXPECT_GE(b.size(), l.total_size());
  for (std::size_t i = 0; i < l.count(); ++i)
    EXPECT_EQ(b.pointers()[i], b.data() + l.params[i].offset) << i;
}

TEST(ParamBuffer, EmptyLayoutStillHasStorage) {
  nanocuda::ParamBuffer b(layout_of({}));
  EXPECT_NE(b.data(), nullptr);
  EXPECT_NE(b.pointers(), nullptr);
}

TEST(ParamBuffer, PackerWritesThroughItsPointers) {
  auto l = layout_of({{0, 4}, {8, 8}});
  nanocuda::ParamBuffer b(l);
  nanocuda::ParamPacker p(l, "k", b.data(), b.pointers());
  p.write_int(0, 7);
  p.write_pointer(1, 0x1234);
  std::int32_t a = 0;
  std::uint64_t c = 0;
  std::memcpy(&a, b.pointers()[0], 4);
  std::memcpy(&c, b.pointers()[1], 8);
  EXPECT_EQ(a, 7);
  EXPECT_EQ(c, 0x1234u);
}

TEST(ParamBuffer, MovedBufferKeepsItsPointers) {
  auto l = layout_of({{0, 8}});
  nanocuda::ParamBuffer a(l);
  unsigned char* data = a.data();
  nanocuda::ParamBuffer b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.pointers()[0], data);
}

constexpr const char* kScale = R"(
extern "C" __global__ void scale(float a, float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
)";

TEST(LauncherGpu, BindOnceAndCallWithArguments) {
  NANOCUDA_REQUIRE_GPU();
  nanocuda::Device dev(0);
  auto stream = nanocuda::Stream::create(dev);
  auto kernel = nanocuda::Program(kScale).compile().get_kernel("scale");
  constexpr unsigned n = 1000;
  std::vector<float> host(n, 1.0f);
  nanocuda::Buffer buf(n * sizeof(float), stream);
  nanocuda::copy_async(buf.ptr(), reinterpret_cast<CUdeviceptr>(host.data()), n * 4, stream);
  nanocuda::LaunchConfig config{{(n + 255) / 256, 1, 1}, {256, 1, 1}};
  auto scale = kernel.bind(config, stream);
  float* x = reinterpret_cast<float*>(buf.ptr());
  scale(2.0f, x, n);
  nanocuda::Launcher moved = std::move(scale);  // still bound after a move
  moved(3.0f, x, n);
  nanocuda::launch(stream, config, kernel, 0.5f, x, n);  // the one-off form
  nanocuda::copy_async(reinterpret_cast<CUdeviceptr>(host.data()), buf.ptr(), n * 4, stream);
  stream.sync();
  for (float v : host) ASSERT_EQ(v, 3.0f);
}

TEST(LauncherGpu, WrongArgumentsRaiseBeforeTheDriver) {
  NANOCUDA_REQUIRE_GPU();
  nanocuda::Device dev(0);
  auto stream = nanocuda::Stream::create(dev);
  auto kernel = nanocuda::Program(kScale).compile().get_kernel("scale");
  nanocuda::LaunchConfig config{{1, 1, 1}, {32, 1, 1}};
  auto scale = kernel.bind(config, stream);
  float* x = nullptr;
  EXPECT_THROW(scale(2.0, x, 1u), nanocuda::ValueError);  // double into a 4-byte float
  EXPECT_THROW(scale(2.0f, x), nanocuda::TypeError);      // 2 arguments for 3
  EXPECT_THROW(nanocuda::launch(stream, config, kernel, 2.0f, x, std::uint64_t{1}),
               nanocuda::ValueError);
  try {
    scale(2.0f, 1.0f, 1u);
    FAIL();
  } catch (const nanocuda::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'scale', parameter 1"), std::string::npos)
        << e.what();
  }
  stream.sync();
}

TEST(LauncherGpu, BadConfigIsRejectedAtBind) {
  NANOCUDA_REQUIRE_GPU();
  nanocuda::Device dev(0);
  auto stream = nanocuda::Stream::create(dev);
  auto kernel = nanocuda::Program(kScale).compile().get_kernel("scale");
  nanocuda::LaunchConfig config{{1, 1, 1}, {0, 1, 1}};
  EXPECT_THROW((void)kernel.bind(config, stream), nanocuda::ValueError);
}

}  // namespace
