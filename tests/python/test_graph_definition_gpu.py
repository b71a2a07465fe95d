"""GraphDefinition on a real GPU: explicit nodes that run and produce their results (alloc,
memset, memcpy, kernels, host callbacks, events, child graphs, conditionals decided by a
kernel), edges edited after the fact, graph[node] views, whole-graph update, and capture
mixed with explicit nodes through GraphBuilder.graph_definition."""

import ctypes

import numpy as np
import pytest

import nanocuda
from nanocuda.graph import GraphCompleteOptions, GraphDefinition

pytestmark = pytest.mark.gpu

SOURCE = r"""
#include <nanocuda/device/graph.cuh>
extern "C" __global__ void store(int* out, int value) { *out = value; }
extern "C" __global__ void add_to(int* out, int value) { atomicAdd(out, value); }
extern "C" __global__ void times(int* out, int m) { *out *= m; }
// Adds 1 to *counter and keeps the loop going while it is below n.
extern "C" __global__ void count_to(nanocuda::conditional_handle h, int* counter, int n) {
  nanocuda::set_conditional(h, ++*counter < n);
}
"""

ONE = nanocuda.LaunchConfig(grid=1, block=1)


@pytest.fixture(scope="module")
def k():
    code = nanocuda.compile(SOURCE)
    return {n: code.get_kernel(n) for n in ("store", "add_to", "times", "count_to")}


@pytest.fixture
def s():
    return nanocuda.Device(0).create_stream()


def read(buf, s, n=1):
    out = np.zeros(n, np.int32)
    nanocuda.copy(out, buf, stream=s)
    s.sync()
    return out


def test_memset_kernel_memcpy_chain_runs_in_order(k, s):
    out = nanocuda.Buffer(16, stream=s)
    g = GraphDefinition()
    a = g.allocate(16)
    ms = a.memset(a.dptr, b"\x02\x00\x00\x00", 4)       # 4 x int32 2
    k1 = ms.launch(ONE, k["times"], a.dptr, 5)            # a[0] = 10
    k2 = k1.launch(ONE, k["add_to"], a.dptr, 1)           # a[0] = 11
    cp = k2.memcpy(out, a.dptr, 16)
    cp.deallocate(a.dptr)
    graph = g.instantiate()
    graph.launch(s)
    assert list(read(out, s, 4)) == [11, 2, 2, 2]


def test_reordering_edges_changes_the_result(k, s):
    out = nanocuda.Buffer(4, stream=s)
    g = GraphDefinition()
    st = g.launch(ONE, k["store"], out, 3)
    mul = st.launch(ONE, k["times"], out, 4)              # (3) * 4 = 12
    add = mul.launch(ONE, k["add_to"], out, 1)            # 13
    g.instantiate().launch(s)
    assert read(out, s)[0] == 13
    mul.pred.clear(); add.pred.clear()                    # now store -> add -> times: (3+1)*4
    add.pred.add(st); mul.pred.add(add)
    g.instantiate().launch(s)
    assert read(out, s)[0] == 16


def test_graph_node_views_update_and_disable_one_executable(k, s):
    out = nanocuda.Buffer(4, stream=s)
    g = GraphDefinition()
    node = g.launch(ONE, k["store"], out, 1)
    graph = g.instantiate()
    graph[node].update(args=(out, 42))
    graph.launch(s)
    assert read(out, s)[0] == 42
    view = graph[node]
    view.disable()
    assert not view.is_enabled
    nanocuda.memset(out, 0, stream=s)
    graph.launch(s)
    assert read(out, s)[0] == 0
    view.enable()
    graph.launch(s)
    assert read(out, s)[0] == 42
    assert node.config.grid == (1, 1, 1)                  # the definition is unchanged


def test_whole_graph_update_from_an_edited_definition(k, s):
    out = nanocuda.Buffer(4, stream=s)
    g = GraphDefinition()
    node = g.launch(ONE, k["store"], out, 7)
    graph = g.instantiate()
    node.update(args=(out, 9))
    graph.launch(s)
    assert read(out, s)[0] == 7
    graph.update(g)
    graph.launch(s)
    assert read(out, s)[0] == 9


def test_host_callbacks_python_and_ctypes_with_user_data(s):
    seen = []
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    raw = proto(lambda p: seen.append(ctypes.cast(p, ctypes.POINTER(ctypes.c_uint8))[0]))
    g = GraphDefinition()
    # Two roots (a HostCallbackNode's `callback` is cuda.core's property, not the verb).
    g.callback(lambda: seen.append("py"))
    g.callback(raw, user_data=bytes([0xAB]))
    g.instantiate(GraphCompleteOptions(upload_stream=s)).launch(s)
    s.sync()
    assert sorted(seen, key=str) == sorted(["py", 0xAB], key=str)


def test_child_graph_and_events(k, s):
    out = nanocuda.Buffer(4, stream=s)
    child = GraphDefinition()
    child.launch(ONE, k["add_to"], out, 5).launch(ONE, k["add_to"], out, 5)
    e = nanocuda.Device(0).create_event()
    g = GraphDefinition()
    first = g.launch(ONE, k["store"], out, 1).record(e).wait(e)
    first.embed(child)
    g.instantiate().launch(s)
    assert read(out, s)[0] == 11


def test_while_loop_decided_by_a_kernel(k, s):
    counter = nanocuda.Buffer(4, stream=s)
    g = GraphDefinition()
    cond = g.create_condition(default_value=1)
    init = g.launch(ONE, k["store"], counter, 0)
    loop = init.while_loop(cond)
    loop.body.launch(ONE, k["count_to"], cond, counter, 10)
    g.instantiate().launch(s)
    assert read(counter, s)[0] == 10


def test_if_else_and_switch_pick_their_branch(k, s):
    out = nanocuda.Buffer(8, stream=s)
    g = GraphDefinition()
    yes = g.create_condition(default_value=1)
    pick = g.create_condition(default_value=2)
    ie = g.if_else(yes)
    ie.then.launch(ONE, k["store"], out, 1)
    ie.else_.launch(ONE, k["store"], out, -1)
    sw = ie.switch(pick, 3)
    for i, body in enumerate(sw.branches):
        body.launch(ONE, k["store"], out.handle + 4, 100 + i)
    g.instantiate().launch(s)
    assert list(read(out, s, 2)) == [1, 102]


def test_captured_graph_gets_explicit_nodes_through_graph_definition(k, s):
    out = nanocuda.Buffer(4, stream=s)
    b = nanocuda.Device(0).create_graph_builder().begin_building()
    nanocuda.launch(b, ONE, k["store"], out, 2)
    b.end_building()
    gd = b.graph_definition
    (captured,) = gd.nodes()
    captured.launch(ONE, k["times"], out, 21)
    gd.instantiate().launch(s)
    assert read(out, s)[0] == 42


def test_builder_callback_takes_a_ctypes_function_with_user_data(s):
    seen = []
    raw = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
        lambda p: seen.append(ctypes.cast(p, ctypes.POINTER(ctypes.c_uint8))[0]))
    b = s.create_graph_builder().begin_building()
    b.callback(raw, user_data=bytes([0x5A]))
    b.callback(lambda: seen.append("py"))
    b.end_building().complete().launch(s)
    s.sync()
    assert seen == [0x5A, "py"]
