// Graph's kernel-node updates from C++ on the mock driver: the typed update_kernel (checked as
// a typed launch is), kernel_index (a node of another definition refused by name).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "nanocuda/launch/graph_definition.h"
#include "nanocuda/nanocuda.h"

namespace {

bool on_mock() { return std::getenv("NANOCUDA_MOCK_CURRENT_DEVICE") != nullptr; }

// The mock's kernels take (const void*, const void*, void*, int).
nanocuda::Kernel mock_kernel() {
  return nanocuda::Kernel::from_handle(reinterpret_cast<CUkernel>(std::uintptr_t{0x1000}));
}

TEST(GraphExecUpdateMock, TypedUpdatesAreCheckedAndNodesOfOtherGraphsRefused) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  using nanocuda::GraphDefinition;
  nanocuda::Device dev(0);
  nanocuda::LaunchConfig config{{1, 1, 1}, {32, 1, 1}};
  const void* p = nullptr;
  void* q = nullptr;
  int n = 4;
  void* args[] = {&p, &p, &q, &n, nullptr};
  GraphDefinition d = GraphDefinition::create(dev);
  d.add_kernel({}, config, mock_kernel(), args);
  CUgraphNode second = d.add_kernel({}, config, mock_kernel(), args);
  nanocuda::Graph g = d.instantiate();
  ASSERT_EQ(g.kernel_nodes().size(), 2u);
  EXPECT_EQ(g.kernel_index(second, "test"), 1u);
  EXPECT_NO_THROW(g.update_kernel(1, p, p, q, 7));
  try {
    g.update_kernel(0, p, p);
    FAIL() << "a short update reached the driver";
  } catch (const nanocuda::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("takes 4 arguments, got 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(g.update_kernel(0, p, p, q, std::uint64_t{7}), nanocuda::ValueError);  // 8 bytes for an int
  EXPECT_THROW(g.update_kernel(5, p, p, q, 7), nanocuda::ValueError);                 // no node 5

  GraphDefinition other = GraphDefinition::create(dev);
  CUgraphNode stranger = other.add_kernel({}, config, mock_kernel(), args);
  try {
    (void)g.kernel_index(stranger, "test.update");
    FAIL() << "a node of another definition was accepted";
  } catch (const nanocuda::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("test.update: node 0x"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is not a kernel node of Graph"), std::string::npos) << e.what();
  }
}

}  // namespace
