// GraphDefinition's edge rules on the mock driver (it models nodes and edges): a node of another
// graph, a destroyed node, a self-edge and a cycle are refused, naming the call and the nodes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "nanocuda/launch/graph_definition.h"
#include "nanocuda/nanocuda.h"

namespace {

using nanocuda::Device;
using nanocuda::GraphDefinition;

bool on_mock() { return std::getenv("NANOCUDA_MOCK_CURRENT_DEVICE") != nullptr; }

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const nanocuda::Error& e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
    return e.what();
  }
  return "(no nanocuda::Error)";
}

TEST(GraphDefinitionMock, EdgesThatWouldBreakTheGraphAreRefused) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  GraphDefinition g = GraphDefinition::create(Device(0));
  CUgraphNode a = g.add_empty({});
  CUgraphNode b = g.add_empty({a});
  CUgraphNode c = g.add_empty({b});
  std::string cycle = error_of([&] { g.connect(c, a, "test.connect"); });
  EXPECT_NE(cycle.find("test.connect"), std::string::npos) << cycle;
  EXPECT_NE(cycle.find("would make a cycle"), std::string::npos) << cycle;
  EXPECT_NE(cycle.find("] empty to node ["), std::string::npos) << cycle;
  EXPECT_EQ(g.edges().size(), 2u);  // nothing was added
  EXPECT_NE(error_of([&] { g.connect(a, a, "test.connect"); }).find("cannot depend on itself"), std::string::npos);
  CUgraphNode d = g.add_empty({});
  g.connect(d, a, "test.connect");  // d only leads into the chain: fine
  EXPECT_EQ(g.edges().size(), 3u);

  GraphDefinition other = GraphDefinition::create(Device(0));
  CUgraphNode x = other.add_empty({});
  EXPECT_NE(error_of([&] { g.connect(a, x, "test.connect"); }).find("not in this graph"), std::string::npos);
  g.destroy_node(b);
  EXPECT_NE(error_of([&] { g.connect(a, b, "test.connect"); }).find("not in this graph"), std::string::npos);
}

// Last: the holds the driver dropped with the graphs above are freed here (in Python a hook
// does it; C++ callers call release_dropped()), so LeakSanitizer sees nothing left.
TEST(GraphDefinitionMock, ZZDroppedHoldsAreReleased) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  GraphDefinition::release_dropped();
}

}  // namespace
