"""Per-node attachment lifetimes of explicit graphs, for the mock driver (tools/mock_libcuda.c
models CUDA user objects, node destruction, child-graph copies and executables): what a node
holds goes when the node, the node owning its graph or the last graph holding it goes. Run by
test_graph_lifetime.py in a process of its own with NANOCUDA_LIBCUDA set to the mock."""

import gc
import os
import time
import weakref

import pytest

import nanocuda
from nanocuda.graph import ChildGraphNode, ConditionalNode, GraphDefinition, HostCallbackNode


MOCK = "NANOCUDA_LIBCUDA" in os.environ  # test_graph_lifetime.py points it at the mock driver


class Held:
    """Something a node holds, observed through a weak reference."""

    def __call__(self):
        pass


def with_callback(payload):
    """A GraphDefinition with one host-callback node calling `payload`."""
    g = GraphDefinition()
    g.callback(payload)
    return g


def eventually(predicate, seconds=2.0):
    """The driver drops holds on its own terms; the release runs at the next pending call."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        gc.collect()
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def test_destroying_a_node_releases_only_what_it_holds():
    g = GraphDefinition()
    a, b = Held(), Held()
    ra, rb = weakref.ref(a), weakref.ref(b)
    na = g.callback(a)
    g.callback(b)
    del a, b
    gc.collect()
    assert ra() is not None and rb() is not None
    na.destroy()
    assert eventually(lambda: ra() is None)
    assert rb() is not None
    del g, na  # a node keeps its graph
    assert eventually(lambda: rb() is None)


@pytest.mark.parametrize("kind", ["if_then", "if_else", "while_loop", "switch"])
def test_destroying_a_conditional_node_releases_its_bodies_attachments(kind):
    g = GraphDefinition()
    cond = g.create_condition()
    node = g.switch(cond, 3) if kind == "switch" else getattr(g, kind)(cond)
    bodies = {"if_then": lambda: [node.then], "if_else": lambda: [node.then, node.else_],
              "while_loop": lambda: [node.body], "switch": lambda: list(node.branches)}[kind]()
    refs = []
    for body in bodies:
        held = Held()
        refs.append(weakref.ref(held))
        body.callback(held)
    del held, bodies, node
    gc.collect()
    assert all(r() is not None for r in refs)
    next(n for n in g.nodes() if isinstance(n, ConditionalNode)).destroy()
    assert eventually(lambda: all(r() is None for r in refs))


def nested(levels):
    """A callback `levels` child graphs deep: (outer definition, its child node, weak ref)."""
    held = Held()
    ref = weakref.ref(held)
    g = with_callback(held)
    node = None
    for _ in range(levels):
        outer = GraphDefinition()
        node = outer.embed(g)
        g = outer
    return g, node, ref


def test_a_child_copy_holds_what_its_original_held_until_its_node_goes():
    for levels in (1, 2, 3):
        outer, node, ref = nested(levels)
        gc.collect()
        assert ref() is not None, levels
        graph = node.child_graph
        for _ in range(levels - 1):
            graph = next(n for n in graph.nodes() if isinstance(n, ChildGraphNode)).child_graph
        cb = next(n for n in graph.nodes() if isinstance(n, HostCallbackNode))
        cb.destroy()
        del cb, graph, node
        assert eventually(lambda: ref() is None), levels
        assert outer.nodes()  # the outer graph is still there


def test_destroying_a_child_node_releases_the_whole_copy():
    outer, node, ref = nested(3)
    gc.collect()
    assert ref() is not None
    node.destroy()
    del node
    assert eventually(lambda: ref() is None)


def test_a_child_view_made_again_sees_the_same_attachments():
    parent = GraphDefinition()
    parent.embed(GraphDefinition()).child_graph.callback(Held())
    gc.collect()
    child = next(n for n in parent.nodes() if isinstance(n, ChildGraphNode)).child_graph
    cb = next(n for n in child.nodes() if isinstance(n, HostCallbackNode))
    ref = weakref.ref(cb.callback)
    cb.destroy()
    del cb
    assert eventually(lambda: ref() is None)


def test_executables_keep_what_they_were_made_with():
    g = GraphDefinition()
    old = Held()
    ref_old = weakref.ref(old)
    node = g.callback(old)
    first = g.instantiate()
    node.destroy()
    new = Held()
    ref_new = weakref.ref(new)
    g.callback(new)
    second = g.instantiate()
    del old, new, node, g
    gc.collect()
    assert ref_old() is not None and ref_new() is not None
    del first
    assert eventually(lambda: ref_old() is None)
    assert ref_new() is not None
    del second
    assert eventually(lambda: ref_new() is None)


def test_kernels_and_buffers_go_with_their_nodes():
    g = GraphDefinition()
    dev = nanocuda.Device()
    buf = dev.memory_resource.allocate(64)
    ref = weakref.ref(buf)
    node = g.memset(buf, 0, 64)
    del buf
    gc.collect()
    assert ref() is not None
    node.destroy()
    assert eventually(lambda: ref() is None)



# -- one hold per kernel and graph, not per node ---------------------------------------------
def compiled_kernel():
    src = 'extern "C" __global__ void k3(const float* a, float* b, float* c, int n) {}'
    try:
        return nanocuda.compile(src, arch="sm_90a").get_kernel("k3")
    except nanocuda.DriverTooOldError as e:  # the mock at CUDA 12.4 (scripts/test-driver-versions)
        pytest.skip(f"NVRTC's cubin needs a newer driver than the mock's: {e}")


def launch_three(g, kernel):
    cfg = nanocuda.LaunchConfig(grid=1, block=32)
    return [g.launch(cfg, kernel, 0, 0, 0, 4) for _ in range(3)]


def test_a_kernel_shared_by_nodes_is_held_by_the_graph_until_it_goes():
    g = GraphDefinition()
    kernel = compiled_kernel()
    ref = weakref.ref(kernel)
    nodes = launch_three(g, kernel)
    del kernel
    nodes[0].destroy()  # the graph holds the kernel, not each node: the others still run it
    gc.collect()
    assert ref() is not None
    assert nodes[1].kernel is ref()
    graph = g.instantiate()
    del g, nodes
    gc.collect()
    assert ref() is not None  # the executable holds it
    del graph
    assert eventually(lambda: ref() is None)


def test_a_kernel_stays_with_an_embedded_copy():
    child = GraphDefinition()
    kernel = compiled_kernel()
    ref = weakref.ref(kernel)
    launch_three(child, kernel)
    parent = GraphDefinition()
    node = parent.embed(child)
    del child, kernel
    gc.collect()
    assert ref() is not None  # the copy in the child node holds what its original held
    node.destroy()
    del node
    assert eventually(lambda: ref() is None)
    assert parent.nodes() == set()


# -- Graph.update(definition): the executable holds what it runs, not what it ran ----------------
def test_an_update_lets_the_old_definitions_attachments_go():
    old, new = Held(), Held()
    ref_old, ref_new = weakref.ref(old), weakref.ref(new)
    first = with_callback(old)
    graph = first.instantiate()
    second = with_callback(new)
    del old, new
    graph.update(second)
    del first, second
    assert eventually(lambda: ref_old() is None)
    assert ref_new() is not None  # the executable runs it now
    del graph
    assert eventually(lambda: ref_new() is None)


def test_a_refused_update_keeps_what_the_graph_runs_and_holds_nothing_new():
    kept, refused = Held(), Held()
    ref_kept, ref_refused = weakref.ref(kept), weakref.ref(refused)
    g = with_callback(kept)
    graph = g.instantiate()
    other = GraphDefinition()
    other.callback(refused)
    other.empty()  # another shape: the driver refuses the update
    del kept, refused
    with pytest.raises(Exception):
        graph.update(other)
    del other
    assert eventually(lambda: ref_refused() is None)
    del g
    gc.collect()
    assert ref_kept() is not None  # the graph still runs it
    del graph
    assert eventually(lambda: ref_kept() is None)


def test_a_definition_kept_after_an_update_keeps_its_own_attachments():
    held = Held()
    ref = weakref.ref(held)
    first = with_callback(held)
    graph = first.instantiate()
    second = with_callback(Held())
    graph.update(second)
    del held
    gc.collect()
    assert ref() is not None  # `first` is still there (and can be instantiated again)
    again = first.instantiate()
    del first, graph
    gc.collect()
    assert ref() is not None  # `again` runs it
    del again
    assert eventually(lambda: ref() is None)


def test_an_update_from_an_embedding_definition_holds_the_embedded_copy():
    inner = GraphDefinition()
    held = Held()
    ref = weakref.ref(held)
    inner.callback(held)
    del held
    shape = with_callback(Held())
    start = GraphDefinition()
    start.embed(shape)
    graph = start.instantiate()
    source = GraphDefinition()
    source.embed(inner)
    del inner
    graph.update(source)
    del source, start
    gc.collect()
    assert ref() is not None  # the executable runs the copy's callback
    del graph
    assert eventually(lambda: ref() is None)


def test_a_kernel_node_added_to_a_body_destroyed_with_its_node_is_refused():
    g = GraphDefinition()
    node = g.if_then(g.create_condition())
    body = node.then
    kernel = compiled_kernel()
    body.launch(nanocuda.LaunchConfig(grid=1, block=32), kernel, 0, 0, 0, 4)
    node.destroy()
    with pytest.raises(ValueError, match=r"^GraphNode: the node was destroyed"):
        body.launch(nanocuda.LaunchConfig(grid=1, block=32), kernel, 0, 0, 0, 4)
    with pytest.raises(TypeError, match="config must be a LaunchConfig"):
        body.launch(None, kernel)

