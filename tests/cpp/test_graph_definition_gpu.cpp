// GraphDefinition on its own (no Python): explicit nodes, edges, records, conditions and the
// errors, run on a real GPU (skipped, with the reason, without one).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gpu_test.h"
#include "nanocuda/launch/graph_definition.h"
#include "nanocuda/nanocuda.h"

using namespace nanocuda;

TEST(GraphDefinitionGpu, AllocMemsetMemcpyFreeRunInOrder) {
  NANOCUDA_REQUIRE_GPU();
  Device d(0);
  Stream s = Stream::create(d);
  PinnedBuffer out(16, d);
  GraphDefinition g = GraphDefinition::create(d);
  CUgraphNode a = g.add_alloc({}, 16, 0, GraphMemoryType::Device, {});
  const CUdeviceptr ptr = g.record(a)->params.alloc.dptr;
  ASSERT_NE(ptr, 0u);
  CUgraphNode ms = g.add_memset({a}, ptr, 0x01020304u, 4, 4, 1, 0);
  CUgraphNode cp = g.add_memcpy({ms}, reinterpret_cast<CUdeviceptr>(out.ptr()), ptr, 16);
  CUgraphNode fr = g.add_free({cp}, ptr);
  EXPECT_EQ(g.nodes().size(), 4u);
  EXPECT_EQ(g.edges().size(), 3u);
  EXPECT_EQ(GraphDefinition::node_type(fr), CU_GRAPH_NODE_TYPE_MEM_FREE);
  EXPECT_EQ(g.record(ms)->params.memset.value, 0x01020304u);
  Graph exec = g.instantiate();
  exec.launch(s);
  s.sync();
  const auto* words = static_cast<const std::uint32_t*>(out.ptr());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(words[i], 0x01020304u);
}

TEST(GraphDefinitionGpu, EdgesAndErrors) {
  NANOCUDA_REQUIRE_GPU();
  Device d(0);
  GraphDefinition g = GraphDefinition::create(d), other = GraphDefinition::create(d);
  CUgraphNode a = g.add_empty({}), b = g.add_empty({});
  g.connect(a, b, "test");
  EXPECT_EQ(g.edges().size(), 1u);
  g.disconnect(a, b, "test");
  EXPECT_TRUE(g.edges().empty());
  CUgraphNode foreign = other.add_empty({});
  EXPECT_THROW(g.add_empty({foreign}), Error);  // a node of another graph
  EXPECT_THROW(g.connect(a, a, "test"), Error);
  EXPECT_THROW(g.add_alloc({}, 0, 0, GraphMemoryType::Device, {}), Error);
  EXPECT_THROW(g.add_memset({}, 0, 1, 3, 1, 1, 0), ValueError);  // element size 3
  CUgraphConditionalHandle h = other.create_condition(1);
  std::vector<GraphDefinition> bodies;
  EXPECT_THROW(g.add_conditional({}, h, CU_GRAPH_COND_TYPE_WHILE, 1, bodies), Error);
  g.destroy_node(a);
  EXPECT_EQ(g.nodes().size(), 1u);
  EXPECT_FALSE(g.contains(a));
}

TEST(GraphDefinitionGpu, ConditionalBodiesAndChildGraphs) {
  NANOCUDA_REQUIRE_GPU();
  Device d(0);
  if (d.compute_capability().first < 9) GTEST_SKIP() << "conditional nodes need CC 9.0 here";
  GraphDefinition g = GraphDefinition::create(d);
  CUgraphConditionalHandle h = g.create_condition(2);
  std::vector<GraphDefinition> bodies;
  CUgraphNode sw = g.add_conditional({}, h, CU_GRAPH_COND_TYPE_SWITCH, 3, bodies);
  ASSERT_EQ(bodies.size(), 3u);
  bodies[2].add_empty({});
  EXPECT_EQ(bodies[2].nodes().size(), 1u);
  EXPECT_EQ(bodies[2].tree_id(), g.tree_id());
  GraphDefinition child = GraphDefinition::create(d);
  child.add_empty({});
  CUgraphNode c = g.add_child({sw}, child);
  EXPECT_EQ(g.child_graph(c).nodes().size(), 1u);
  Stream s = Stream::create(d);
  g.instantiate().launch(s);
  s.sync();
}
