// GraphDefinition on the mock driver (it models nodes, edges and user objects): the edge rules (a
// node of another graph, a destroyed node, a self-edge and a cycle are refused, naming the call
// and the nodes) and per-node attachment lifetimes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nanocuda/core/event.h"
#include "nanocuda/launch/graph_builder.h"
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

void no_op(void*) {}

TEST(GraphDefinitionMock, NodesOfEachKindEdgesAndInstantiation) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  GraphDefinition g = GraphDefinition::create(Device(0));
  nanocuda::Event event(Device(0));
  CUgraphNode alloc = g.add_alloc({}, 256, 0, nanocuda::GraphMemoryType::Device, {});
  CUdeviceptr p = g.record(alloc)->params.alloc.dptr;
  EXPECT_NE(p, 0u);
  CUgraphNode set = g.add_memset({alloc}, p, 7, 4, 64, 1, 0);
  CUgraphNode copy = g.add_memcpy({set}, p + 128, p, 64);
  CUgraphNode rec = g.add_event_record({copy}, event);
  CUgraphNode wait = g.add_event_wait({rec}, event);
  CUgraphNode host = g.add_host({wait}, no_op, nullptr, nullptr);
  CUgraphNode child = g.add_child({host}, GraphDefinition::create(Device(0)));
  std::vector<GraphDefinition> bodies;
  CUgraphNode cond = g.add_conditional({child}, g.create_condition(1u), CU_GRAPH_COND_TYPE_IF, 1, bodies);
  CUgraphNode free_node = g.add_free({cond}, p);
  CUgraphNode empty = g.add_empty({});
  EXPECT_EQ(g.nodes().size(), 10u);
  EXPECT_EQ(g.edges().size(), 8u);
  const std::pair<CUgraphNode, CUgraphNodeType> kinds[] = {
      {alloc, CU_GRAPH_NODE_TYPE_MEM_ALLOC}, {set, CU_GRAPH_NODE_TYPE_MEMSET},
      {copy, CU_GRAPH_NODE_TYPE_MEMCPY}, {rec, CU_GRAPH_NODE_TYPE_EVENT_RECORD},
      {wait, CU_GRAPH_NODE_TYPE_WAIT_EVENT}, {host, CU_GRAPH_NODE_TYPE_HOST},
      {child, CU_GRAPH_NODE_TYPE_GRAPH}, {cond, CU_GRAPH_NODE_TYPE_CONDITIONAL},
      {free_node, CU_GRAPH_NODE_TYPE_MEM_FREE}, {empty, CU_GRAPH_NODE_TYPE_EMPTY}};
  for (const auto& [node, type] : kinds) {
    EXPECT_EQ(GraphDefinition::node_type(node), type);
    EXPECT_EQ(g.record(node)->type, type);
  }
  g.connect(empty, alloc, "test.connect");
  g.disconnect(set, copy, "test.disconnect");
  EXPECT_EQ(g.edges().size(), 8u);
  EXPECT_EQ(bodies.size(), 1u);
  EXPECT_TRUE(g.child_graph(child).nodes().empty());
  EXPECT_EQ(g.destroy_node(empty).size(), 1u);
  EXPECT_EQ(g.nodes().size(), 9u);
  nanocuda::Graph exec = g.instantiate();
  EXPECT_NE(exec.exec_handle(), nullptr);
}

// What a node holds goes with the node: a CUDA user object per attachment, released when the
// node is destroyed, when the node owning its graph is, or with the last graph holding it.

std::weak_ptr<int> held_by_callback(GraphDefinition& g, CUgraphNode* node = nullptr) {
  auto held = std::make_shared<int>(1);
  CUgraphNode n = g.add_host({}, no_op, nullptr, held);
  if (node) *node = n;
  return held;
}

TEST(GraphDefinitionMock, DestroyingANodeReleasesWhatItHolds) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  GraphDefinition g = GraphDefinition::create(Device(0));
  CUgraphNode a = nullptr;
  auto first = held_by_callback(g, &a);
  auto second = held_by_callback(g);
  CUgraphNode k = g.add_empty({a});
  EXPECT_EQ(g.edges().size(), 1u);
  std::vector<CUgraphNode> gone = g.destroy_node(a);
  EXPECT_EQ(gone, std::vector<CUgraphNode>{a});
  GraphDefinition::release_dropped();
  EXPECT_TRUE(first.expired());
  EXPECT_FALSE(second.expired());
  EXPECT_TRUE(g.edges().empty());
  EXPECT_EQ(g.nodes().size(), 2u);  // the second callback and k
  (void)k;
  {
    nanocuda::Graph exec = g.instantiate();  // an executable holds what its source held
    GraphDefinition dropped = std::move(g);
  }
  GraphDefinition::release_dropped();
  EXPECT_TRUE(second.expired());
}

TEST(GraphDefinitionMock, ConditionalBodiesAndChildCopiesGoWithTheirNode) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  GraphDefinition g = GraphDefinition::create(Device(0));
  std::vector<GraphDefinition> bodies;
  CUgraphNode sw = g.add_conditional({}, g.create_condition(std::nullopt), CU_GRAPH_COND_TYPE_SWITCH, 2, bodies);
  ASSERT_EQ(bodies.size(), 2u);
  auto in_body = held_by_callback(bodies[1]);
  std::weak_ptr<int> in_copy;
  CUgraphNode child_node = nullptr;
  {
    GraphDefinition child = GraphDefinition::create(Device(0));
    in_copy = held_by_callback(child);
    child_node = g.add_child({sw}, child);
  }
  GraphDefinition::release_dropped();
  EXPECT_FALSE(in_copy.expired());  // the copy in the child node holds it
  EXPECT_EQ(g.destroy_node(sw).size(), 2u);  // the switch and its body's callback
  GraphDefinition::release_dropped();
  EXPECT_TRUE(in_body.expired());
  EXPECT_FALSE(bodies[1].is_valid());
  GraphDefinition copy = g.child_graph(child_node);
  ASSERT_EQ(copy.nodes().size(), 1u);
  copy.destroy_node(copy.nodes()[0]);
  GraphDefinition::release_dropped();
  EXPECT_TRUE(in_copy.expired());
}

TEST(GraphDefinitionMock, ClosingABuilderReleasesWhatTheDriverDropped) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  std::weak_ptr<int> held;
  {
    GraphDefinition g = GraphDefinition::create(Device(0));
    held = held_by_callback(g);
  }
  EXPECT_FALSE(held.expired());  // queued: the driver's thread may not release it
  nanocuda::GraphBuilder::create(Device(0)).close();
  EXPECT_TRUE(held.expired());
}

TEST(GraphDefinitionMock, KeepAliveOnceHoldsOneObjectPerKeyAndGraph) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  GraphDefinition g = GraphDefinition::create(Device(0));
  int key = 0, made = 0;
  auto held = std::make_shared<int>(1);
  std::weak_ptr<int> weak = held;
  for (int i = 0; i < 3; ++i) g.keep_alive_once(&key, [&] { ++made; return std::shared_ptr<void>(held); });
  EXPECT_EQ(made, 1);
  held.reset();
  {
    GraphDefinition dropped = std::move(g);
  }
  GraphDefinition::release_dropped();
  EXPECT_TRUE(weak.expired());
}

TEST(GraphDefinitionMock, AnUpdateHoldsTheNewDefinitionsAttachmentsAndLetsTheOldOnesGo) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  std::weak_ptr<int> old_held, new_held, refused_held;
  std::optional<nanocuda::Graph> exec;
  {
    GraphDefinition first = GraphDefinition::create(Device(0));
    old_held = held_by_callback(first);
    exec.emplace(first.instantiate());
    GraphDefinition second = GraphDefinition::create(Device(0));
    new_held = held_by_callback(second);
    GraphDefinition refused = GraphDefinition::create(Device(0));
    refused_held = held_by_callback(refused);
    refused.add_empty({});
    EXPECT_THROW(refused.update(*exec), nanocuda::ValueError);  // another shape: nothing changes
    second.update(*exec);
  }
  GraphDefinition::release_dropped();
  EXPECT_TRUE(old_held.expired());  // the mock, as the driver, kept the executable's references
  EXPECT_TRUE(refused_held.expired());
  EXPECT_FALSE(new_held.expired());  // what the executable runs now
  exec.reset();
  GraphDefinition::release_dropped();
  EXPECT_TRUE(new_held.expired());
}

// Last: the holds the driver dropped with the graphs above are freed here (in Python a hook
// does it; C++ callers call release_dropped()), so LeakSanitizer sees nothing left.
TEST(GraphDefinitionMock, ZZDroppedHoldsAreReleased) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  GraphDefinition::release_dropped();
}

}  // namespace
