// Loading compiled code on a GPU: kernels, attributes, parameter layout, occupancy.
#include <gtest/gtest.h>

#include "gpu_test.h"
#include "nanocuda/compile/library.h"
#include "nanocuda/compile/program.h"

namespace {

constexpr const char* kSaxpy = R"(
extern "C" __global__ void saxpy(float a, float *x, float *y, float *out, size_t n) {
  size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n) out[tid] = a * x[tid] + y[tid];
}
template <int N> __global__ void fill(int* p) { p[threadIdx.x] = N; }
)";

TEST(CompileGpu, LoadKernelAttributesAndLayout) {
  NANOCUDA_REQUIRE_GPU();
  nanocuda::Device dev(0);
  auto code = nanocuda::Program(kSaxpy).compile(nanocuda::CodeType::cubin, {"fill<7>"});
  auto k = code.get_kernel("saxpy");
  EXPECT_EQ(k.name(), "saxpy");
  const auto& layout = k.param_layout();
  ASSERT_EQ(layout.count(), 5u);
  EXPECT_EQ(layout.params[0].offset, 0u);
  EXPECT_EQ(layout.params[0].size, 4u);
  EXPECT_EQ(layout.params[1].offset, 8u);
  EXPECT_EQ(layout.params[4].size, 8u);
  EXPECT_EQ(layout.total_size(), 40u);
  auto attrs = k.attributes(dev);
  EXPECT_GT(attrs.num_registers, 0);
  EXPECT_GE(attrs.max_threads_per_block, 256);
  EXPECT_GT(attrs.binary_version, 0);
  EXPECT_GT(k.max_active_blocks_per_multiprocessor(256, 0, dev), 0);
  EXPECT_GT(k.max_potential_block_size(0, 0, dev).second, 0);
  EXPECT_NE(k.function(*dev.context()), nullptr);
  EXPECT_EQ(k.function(*dev.context()), k.function(*dev.context()));
  auto f = code.get_kernel("fill<7>");
  EXPECT_EQ(f.param_layout().count(), 1u);
}

TEST(CompileGpu, MissingKernelListsWhatIsThere) {
  NANOCUDA_REQUIRE_GPU();
  auto code = nanocuda::Program(kSaxpy).compile(nanocuda::CodeType::cubin);
  try {
    (void)code.get_kernel("nope");
    FAIL();
  } catch (const nanocuda::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("saxpy"), std::string::npos) << e.what();
  }
}

TEST(CompileGpu, PtxAndLtoirLoad) {
  NANOCUDA_REQUIRE_GPU();
  auto ptx = nanocuda::Program(kSaxpy).compile(nanocuda::CodeType::ptx);
  EXPECT_EQ(ptx.get_kernel("saxpy").param_layout().count(), 5u);
  auto lto = nanocuda::Program(kSaxpy).compile(nanocuda::CodeType::ltoir);
  EXPECT_EQ(lto.get_kernel("saxpy").param_layout().count(), 5u);
}

}  // namespace
