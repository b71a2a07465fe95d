"""GraphDefinition cases for the mock driver (tools/mock_libcuda.c models graphs: nodes, types,
edges): building, topology edits, node records, identity, conditions and the errors. Run by
test_graph_definition.py in a process of its own with NANOCUDA_LIBCUDA set to the mock."""

import ctypes
import gc

import pytest

import nanocuda
import nanocuda.typing
from nanocuda.graph import (
    AllocNode,
    ChildGraphNode,
    EmptyNode,
    EventRecordNode,
    FreeNode,
    GraphCompleteOptions,
    GraphDefinition,
    GraphNode,
    HostCallbackNode,
    IfElseNode,
    IfNode,
    KernelNode,
    MemcpyNode,
    MemsetNode,
    SwitchNode,
    WhileNode,
)


@pytest.fixture(scope="module")
def kernel():
    # (const float*, float*, float*, int): the mock driver's default parameter layout too.
    src = 'extern "C" __global__ void k3(const float* a, float* b, float* c, int n) {}'
    try:
        return nanocuda.compile(src, arch="sm_90a").get_kernel("k3")
    except nanocuda.DriverTooOldError as e:  # the mock at CUDA 12.4 (scripts/test-driver-versions)
        pytest.skip(f"NVRTC's cubin needs a newer driver than the mock's: {e}")


def test_entry_nodes_and_chains_make_the_edges_asked_for():
    g = GraphDefinition()
    a = g.empty()
    b = a.join()
    c = g.empty()
    d = g.join(b, c)
    assert isinstance(d, EmptyNode) and d.type.name == "CU_GRAPH_NODE_TYPE_EMPTY"
    assert g.nodes() == {a, b, c, d}
    assert g.edges() == {(a, b), (b, d), (c, d)}
    assert set(d.pred) == {b, c} and set(a.succ) == {b} and set(c.pred) == set()
    assert g._entry.type is None and g._entry.pred == set() and g._entry.handle is None


def test_nodes_come_back_as_the_same_objects():
    g = GraphDefinition()
    a, b = g.empty(), g.empty()
    a.succ = {b}
    assert any(n is a for n in g.nodes())
    ((x, y),) = g.edges()
    assert x is a and y is b
    (p,) = b.pred
    assert p is a


def test_pred_and_succ_are_mutable_views():
    g = GraphDefinition()
    a, b, c = g.empty(), g.empty(), g.empty()
    a.succ.add(b)
    c.pred.add(b)
    assert g.edges() == {(a, b), (b, c)}
    b.pred.discard(a)
    assert g.edges() == {(b, c)}
    c.pred = {a}
    assert g.edges() == {(a, c)}
    b.succ.clear()
    assert b not in a.succ and len(a.succ) == 1


def test_destroy_removes_the_node_its_edges_and_its_registry_entry():
    gc.collect()
    g = GraphDefinition()
    a = g.empty()
    b = a.join()
    assert g._tree.nodes[b.handle]() is b  # the tree's registry of node objects
    h = a.handle
    a.destroy()
    assert not a.is_valid and b.is_valid
    assert g.nodes() == {b} and g.edges() == set()
    assert h not in g._tree.nodes and a.handle is None and a.type is None and a.succ == set()
    with pytest.raises(nanocuda.CudaError, match="not in this graph"):
        b.succ.add(a)  # as cuda.core: the driver's refusal
    a.destroy()  # a no-op the second time
    with pytest.raises(ValueError, match="destroyed"):
        a.join()


def test_node_of_another_graph_is_refused():
    g1, g2 = GraphDefinition(), GraphDefinition()
    a = g1.empty()
    with pytest.raises(nanocuda.CudaError, match="GraphDefinition.empty.*not in this graph"):
        g2.join(a)
    b = g2.empty()
    with pytest.raises(nanocuda.CudaError, match="GraphNode.succ.add.*not in this graph"):
        a.succ.add(b)
    with pytest.raises(nanocuda.CudaError, match="cannot depend on itself"):
        a.succ.add(a)
    with pytest.raises(TypeError, match="expected a GraphNode"):
        a.succ.add("not a node")


def test_alloc_memset_memcpy_free_records():
    g = GraphDefinition()
    a = g.allocate(4096)
    b = a.allocate(4096)
    assert isinstance(a, AllocNode) and a.dptr != 0 and a.dptr != b.dptr
    assert (a.bytesize, a.memory_type, a.peer_access) == (4096, "device", ())
    assert a.device_id == nanocuda.Device().device_id
    ms = b.memset(b.dptr, b"\xab\xcd", 2048)
    assert isinstance(ms, MemsetNode)
    assert (ms.dptr, ms.value, ms.element_size, ms.width, ms.height, ms.pitch) == (b.dptr, 0xCDAB, 2, 2048, 1, 0)
    cp = ms.memcpy(a.dptr, b.dptr, 4096)
    assert isinstance(cp, MemcpyNode) and (cp.dst, cp.src, cp.size) == (a.dptr, b.dptr, 4096)
    fr = cp.deallocate(b.dptr)
    assert isinstance(fr, FreeNode) and fr.dptr == b.dptr and set(fr.pred) == {cp}
    # Records survive losing the Python objects: nodes() rebuilds them from the core.
    handle = ms.handle
    del ms
    gc.collect()
    (again,) = [n for n in g.nodes() if n.handle == handle]
    assert isinstance(again, MemsetNode) and again.value == 0xCDAB
    again.update(value=7, width=16)
    assert (again.value, again.element_size, again.width) == (7, 1, 16)


def test_allocation_and_memset_bad_input():
    g = GraphDefinition()
    with pytest.raises(ValueError, match="'invalid' is not a valid GraphMemoryType"):
        g.allocate(64, memory_type="invalid")
    with pytest.raises(nanocuda.CudaError, match="size must be positive"):  # cuda.core: CUDAError
        g.allocate(0)
    a = g.allocate(64)
    with pytest.raises(ValueError, match="1, 2 or 4 bytes"):
        a.memset(a.dptr, b"\x01\x02\x03", 10)
    with pytest.raises(ValueError, match=r"\[0, 256\)"):
        a.memset(a.dptr, 300, 10)
    with pytest.raises(TypeError, match="dst must be a Buffer or an int"):
        a.memset("here", 1, 10)
    assert g.allocate(64, memory_type=nanocuda.typing.GraphMemoryType.MANAGED).memory_type == "managed"


def test_kernel_node_packs_arguments_like_a_launch(kernel):
    g = GraphDefinition()
    cfg = nanocuda.LaunchConfig(grid=(2, 3, 1), block=(32, 4, 1), shmem_size=128)
    k = g.launch(cfg, kernel, 0x1000, 0x2000, 0x3000, 7)
    assert isinstance(k, KernelNode) and k.kernel is kernel
    assert (k.grid, k.block, k.shmem_size) == ((2, 3, 1), (32, 4, 1), 128)
    assert k.config is cfg  # the config it was built with (cuda.core compares with ==)
    with pytest.raises(TypeError, match="takes 4 arguments, got 1"):
        g.launch(cfg, kernel, 0x1000)
    with pytest.raises(TypeError, match="config must be a LaunchConfig"):
        g.launch("cfg", kernel)
    k.update(config=nanocuda.LaunchConfig(grid=5, block=64))
    assert k.grid == (5, 1, 1) and k.block == (64, 1, 1)
    with pytest.raises(ValueError, match="changing the kernel needs args"):
        k.update(kernel=kernel)


def test_callbacks_python_and_ctypes():
    g = GraphDefinition()

    def cb():
        pass

    n = g.callback(cb)
    assert isinstance(n, HostCallbackNode) and n.callback is cb
    with pytest.raises(ValueError, match="user_data is only supported"):
        g.callback(cb, user_data=b"x")
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    c = g.callback(proto(lambda p: None), user_data=b"\xab")
    assert c.callback is None
    with pytest.raises(TypeError, match="CFUNCTYPE"):
        g.callback(ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 0))
    with pytest.raises(TypeError, match="callable"):
        g.callback(42)


def test_events_and_child_graphs():
    dev = nanocuda.Device()
    e = dev.create_event()
    g = GraphDefinition()
    r = g.record(e)
    w = r.wait(e)
    assert isinstance(r, EventRecordNode) and r.event is e and w.event is e
    child = GraphDefinition()
    child.empty().join()
    node = w.embed(child)
    assert isinstance(node, ChildGraphNode) and isinstance(node.child_graph, GraphDefinition)
    with pytest.raises(TypeError, match="child must be a GraphDefinition"):
        g.embed("not a graph")
    with pytest.raises(TypeError, match="event must be an Event"):
        g.record(None)


def test_conditionals_and_their_bodies():
    g = GraphDefinition()
    cond = g.create_condition(default_value=1)
    assert cond.handle == int(cond) and repr(cond).startswith("<GraphCondition handle=0x")
    i = g.if_then(cond)
    ie = i.if_else(cond)
    wl = ie.while_loop(cond)
    sw = wl.switch(cond, 3)
    assert isinstance(i, IfNode) and isinstance(ie, IfElseNode)
    assert isinstance(wl, WhileNode) and isinstance(sw, SwitchNode)
    assert len(sw.branches) == 3 and ie.else_ != ie.then and wl.cond_type == "while"
    body = wl.body.empty()
    assert wl.body.nodes() == {body} and body not in g.nodes()
    assert {type(n) for n in g.nodes()} == {IfNode, IfElseNode, WhileNode, SwitchNode}
    with pytest.raises(TypeError, match="GraphCondition"):
        g.if_then(5)
    with pytest.raises(nanocuda.CudaError):
        g.switch(cond, 0)
    with pytest.raises(nanocuda.CudaError, match="not made by create_condition"):
        GraphDefinition().while_loop(cond)


def test_instantiate_options_and_protocols():
    g = GraphDefinition()
    g.empty()
    assert isinstance(g.instantiate(), nanocuda.Graph)
    assert isinstance(g.instantiate({"use_node_priority": True}), nanocuda.Graph)
    with pytest.raises(TypeError, match="unknown GraphCompleteOptions field 'bogus'"):
        g.instantiate({"bogus": True})
    pending = GraphCompleteOptions(upload_stream="later")  # cuda.core checks it on use
    assert pending.upload_stream == "later"
    with pytest.raises(TypeError, match="upload_stream must be a Stream"):
        g.instantiate(pending)
    with pytest.raises(TypeError, match="options must be a GraphDebugPrintOptions"):
        g.debug_dot_print("x.dot", options="verbose")
    assert g == g and hash(g) == hash(g) and g != GraphDefinition()
    a = g.empty()
    assert a == a and hash(a) == hash(a) and a != g.empty() and "EmptyNode" in repr(a)
    with pytest.raises(TypeError):
        GraphNode()


def test_buffer_operands_and_owners_are_checked_and_retained():
    import weakref

    buf = nanocuda.Buffer(64)
    g = GraphDefinition()
    assert g.memset(buf, 1, 64).dptr == buf.handle
    with pytest.raises(ValueError, match="dst_owner cannot be used when dst is a Buffer"):
        g.memcpy(buf, buf.handle, 8, dst_owner=buf)
    raw = buf.handle
    buf.close()
    with pytest.raises(ValueError, match="dst Buffer has no active allocation"):
        g.memset(buf, 1, 4)
    with pytest.raises(ValueError, match="src_owner Buffer has no active allocation"):
        g.memcpy(raw, raw, 4, src_owner=buf)

    class Owner:
        pass

    owner = Owner()
    alive = weakref.ref(owner)
    g2 = GraphDefinition()
    g2.memset(0x1000, 1, 4, dst_owner=owner)
    del owner
    gc.collect()
    assert alive() is not None  # the graph holds it
    del g2
    gc.collect()
    assert alive() is None  # and lets it go with the graph


def test_builder_callbacks_follow_the_same_rule():
    b = nanocuda.Device().create_graph_builder().begin_building()
    with pytest.raises(ValueError, match="GraphBuilder.callback: user_data is only supported"):
        b.callback(print, user_data=b"x")
    with pytest.raises(TypeError, match="GraphBuilder.callback: a ctypes callback must be CFUNCTYPE"):
        b.callback(ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 0))
    with pytest.raises(TypeError, match="GraphBuilder.callback: fn must be a callable"):
        b.callback(42)


def test_destroying_an_owning_node_invalidates_its_graphs_without_a_crash():
    g = GraphDefinition()
    cond = g.create_condition()
    sw = g.switch(cond, 2)
    inner = sw.branches[0].empty()
    child = g.embed(GraphDefinition())
    view = child.child_graph
    before, bodies = hash(view), sw.branches
    sw.destroy()
    child.destroy()
    assert len(bodies) == 2
    for body in (*bodies, view):
        assert not body.is_valid and body.handle == 0
        with pytest.raises(ValueError, match="destroyed with the node that owned it"):
            body.nodes()
    assert not inner.is_valid and hash(view) == before and view == view
    assert inner.type is None and inner.handle is None and inner.pred == set()
    inner.destroy()  # nothing left to do: no driver call on a freed handle
    assert "destroyed" in repr(inner) and "destroyed" in repr(child)


def test_conditions_pass_to_kernels_and_numpy_scalars_fill(kernel):
    import numpy as np

    g = GraphDefinition()
    cond = g.create_condition(default_value=1)
    loop = g.while_loop(cond)
    step = loop.body.launch(nanocuda.LaunchConfig(grid=1, block=1), kernel, cond, 0, 0, 1)
    assert isinstance(step.if_else(cond), IfElseNode)  # conditions of the tree work in bodies
    a = g.allocate(16)
    assert (a.memset(a.dptr, np.int32(50), 1).value, a.memset(a.dptr, np.float32(2.0), 1).value) == (50, 0x40000000)


def test_cycles_and_edges_to_destroyed_nodes_are_refused_naming_the_nodes():
    g = GraphDefinition()
    a = g.empty()
    b = a.join()
    c = b.join()
    with pytest.raises(nanocuda.CudaError, match=r"GraphNode\.succ\.add.*edge from node \[\d\] empty to node \[\d\] "
                                                 r"empty would make a cycle"):
        c.succ.add(a)
    with pytest.raises(nanocuda.CudaError, match=r"GraphNode\.pred\.add.*would make a cycle"):
        a.pred.add(b)
    assert (c, a) not in g.edges() and len(g.edges()) == 2
    d = g.empty()
    d.succ.add(a)  # not a cycle: d only leads into the chain
    assert (d, a) in g.edges()
    b.destroy()
    with pytest.raises(nanocuda.CudaError, match=r"GraphNode\.succ\.add.*not in this graph.*destroyed"):
        b.succ.add(c)
    with pytest.raises(nanocuda.CudaError, match=r"GraphNode\.succ\.add.*not in this graph.*destroyed"):
        a.succ.add(b)


def test_update_from_a_definition_of_another_shape_names_both_topologies():
    g1, g2 = GraphDefinition(), GraphDefinition()
    g1.empty().join()
    x = g2.empty()
    x.join()
    x.join()
    graph = g1.instantiate()
    with pytest.raises(ValueError, match=r"Graph\.update: .*topology differs.*this graph: 2 nodes.*new graph: 3 nodes"):
        graph.update(g2)


def test_adjacency_sets_support_the_set_operators():
    g = GraphDefinition()
    hub = g.empty()
    a, b, c, d = (g.empty() for _ in range(4))
    hub.succ |= {a, b, c}
    assert hub.succ == {a, b, c} and isinstance(hub.succ & {a, d}, set)
    assert hub.succ & {a, d} == {a} and hub.succ | {d} == {a, b, c, d}
    assert hub.succ - {c} == {a, b} and hub.succ ^ {c, d} == {a, b, d}
    hub.succ &= {a, d}
    assert hub.succ == {a} and set(g.edges()) == {(hub, a)}
    hub.succ ^= {a, b}
    assert hub.succ == {b} and b.pred == {hub}
    assert hub.succ.pop() is b and len(hub.succ) == 0
    with pytest.raises(KeyError):
        hub.succ.pop()


def test_launch_is_the_extension_fast_path_and_matches_the_python_one(kernel):
    import sys

    cfg = nanocuda.LaunchConfig(grid=1, block=32)
    assert type(GraphDefinition.__dict__["launch"]).__name__ == "method_descriptor"
    g = GraphDefinition()
    refs = sys.getrefcount(kernel), sys.getrefcount(cfg)
    made = [g.launch(cfg, kernel, 0x1000, 0x2000, 0x3000, i) for i in range(50)]
    assert all(type(n) is KernelNode and n.is_valid and n.graph is g for n in made)
    assert len({n.handle for n in made}) == 50 and g.nodes() == set(made)
    assert all(any(m is n for m in g.nodes()) for n in made[:3])  # the objects it returned
    assert made[7].kernel is kernel and made[7].config is cfg and made[7]._extra("args") == (0x1000, 0x2000, 0x3000, 7)
    made[3].destroy()
    assert not made[3].is_valid and len(g.nodes()) == 49

    class Sub(GraphDefinition):  # a subclass takes the Python path: the same node
        __slots__ = ()
    s = Sub()
    n = s.launch(cfg, kernel, 0x1000, 0x2000, 0x3000, 1)
    assert type(n) is KernelNode and s.nodes() == {n} and n.kernel is kernel
    with pytest.raises(TypeError, match="GraphDefinition.launch: kernel must be a Kernel, got int"):
        g.launch(cfg, 5)
    with pytest.raises(TypeError, match="takes 4 arguments, got 0"):
        g.launch(cfg, kernel)
    sw = g.switch(g.create_condition(), 1)
    body = sw.branches[0]
    sw.destroy()
    with pytest.raises(ValueError, match="the node was destroyed"):
        body.launch(cfg, kernel, 0x1000, 0x2000, 0x3000, 1)
    del made, n, s, g, body, sw
    gc.collect()
    assert (sys.getrefcount(kernel), sys.getrefcount(cfg)) == refs  # nothing held past the graphs
