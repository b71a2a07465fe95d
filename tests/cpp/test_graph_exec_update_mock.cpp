// Graph's kernel-node updates from C++ on the mock driver: the typed update_kernel (checked as
// a typed launch is), kernel_index (a node of another definition refused by name), and the
// run-time packing form (try_pack_kernel_params: the node's own buffer, a nested pack refused).
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

TEST(GraphExecUpdateMock, RunTimePackingUsesTheNodesBufferAndRefusesANestedPack) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  using nanocuda::GraphDefinition;
  using nanocuda::ParamPacker;
  nanocuda::Device dev(0);
  nanocuda::LaunchConfig config{{1, 1, 1}, {32, 1, 1}};
  const void* p = nullptr;
  int n = 4;
  void* args[] = {&p, &p, &p, &n, nullptr};
  GraphDefinition d = GraphDefinition::create(dev);
  d.add_kernel({}, config, mock_kernel(), args);
  d.add_kernel({}, config, mock_kernel(), args);
  nanocuda::Graph g = d.instantiate();
  int packs = 0;
  bool nested = true;
  EXPECT_TRUE(g.try_pack_kernel_params(1, [&](ParamPacker& packer) {
    packer.check_count(4);
    for (std::size_t i = 0; i < 3; ++i) packer.write_pointer(i, 0x7f0000001000 + 0x1000 * i);
    packer.write_int(3, 7);
    EXPECT_TRUE(g.is_packing());
    // The node's buffer is in use: a nested pack is refused (the caller packs elsewhere), and
    // what would free the buffer raises.
    nested = g.try_pack_kernel_params(1, [&](ParamPacker&) { ++packs; });
    EXPECT_THROW(g.update(d.handle(), d.owner()), nanocuda::ValueError);
    ++packs;
  }));
  EXPECT_FALSE(nested);
  EXPECT_EQ(packs, 1);
  EXPECT_FALSE(g.is_packing());
  EXPECT_THROW(g.try_pack_kernel_params(5, [](ParamPacker&) {}), nanocuda::ValueError);  // no node 5
  EXPECT_THROW(g.try_pack_kernel_params(0, [](ParamPacker& packer) { packer.check_count(2); }),
               nanocuda::TypeError);
  EXPECT_FALSE(g.is_packing());  // a pack that threw leaves the node usable
  EXPECT_TRUE(g.try_pack_kernel_params(0, [](ParamPacker& packer) { packer.write_int(3, 1); }));
}

}  // namespace
