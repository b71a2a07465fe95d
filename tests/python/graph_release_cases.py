"""Attachment releases that wait: an update of a launched Graph lets the old definition's
attachments go only after the launches made before it (the mock's host functions wait for a
sync, as queued work waits on a GPU), and a GraphBuilder's per-node holds (GPU only: the mock's
captures make graphs without nodes). Run by test_graph_lifetime.py against the mock and by
test_graph_lifetime_gpu.py on the driver, each in a process of its own."""

import ctypes
import gc
import os
import time
import weakref

import pytest

import nanocuda
from graph_lifetime_cases import MOCK, Held, eventually, with_callback
from nanocuda.graph import ChildGraphNode, GraphDefinition, HostCallbackNode


# -- An update lets the old attachments go only after the launches made before it ----------------
class Slow:
    """A host-callback payload that keeps its stream busy a while (on a GPU) and counts its calls."""

    def __init__(self, calls, seconds=0.5):
        self.calls, self.seconds = calls, seconds

    def __call__(self):
        time.sleep(self.seconds)
        self.calls.append(1)


def launched_then_updated(stream, old, between=None):
    """A Graph whose definition's callback `old` (then only weakly referenced) is launched on
    `stream`, `between()` called, then updated to another definition: (graph, weak ref to `old`,
    the new definition)."""
    ref = weakref.ref(old)
    first = with_callback(old)
    graph = first.instantiate()
    second = with_callback(Held())
    del old
    graph.launch(stream)
    if between:
        between()
    graph.update(second)
    del first
    gc.collect()
    return graph, ref, second


def pending_host_functions():
    """Host functions the mock driver has queued and not run (0 on a GPU: not observable)."""
    if not MOCK:
        return 0
    return ctypes.c_int.in_dll(ctypes.CDLL(os.environ["NANOCUDA_LIBCUDA"]), "nanocuda_mock_host_funcs_pending").value


def test_an_update_keeps_the_old_attachments_until_the_earlier_launch_is_done():
    calls = []
    s = nanocuda.Stream()
    graph, ref, second = launched_then_updated(s, Slow(calls))
    assert ref() is not None  # the launch before the update may still be calling it
    if MOCK:
        assert pending_host_functions() == 1  # the release waits behind the launch
    s.sync()
    assert calls == ([] if MOCK else [1])  # the mock runs no graph nodes
    assert eventually(lambda: ref() is None)
    del graph, second


def test_a_second_update_without_launches_releases_the_first_updates_set_at_once():
    calls = []
    s = nanocuda.Stream()
    graph, ref, second = launched_then_updated(s, Slow(calls))
    held = Held()
    ref_second = weakref.ref(held)
    third = with_callback(held)
    del held
    graph.update(third)
    del second, third
    s.sync()
    assert eventually(lambda: ref() is None)
    assert ref_second() is not None  # the graph runs it now
    del graph
    assert eventually(lambda: ref_second() is None)


def test_closing_the_graph_with_a_release_pending_leaks_nothing():
    calls = []
    s = nanocuda.Stream()
    graph, ref, second = launched_then_updated(s, Slow(calls))
    graph.close()
    del graph, second
    gc.collect()
    assert ref() is not None  # still behind the launch
    s.sync()
    assert eventually(lambda: ref() is None)


def test_a_refused_update_queues_no_release():
    calls = []
    old = Slow(calls, 0.2)
    ref = weakref.ref(old)
    g = with_callback(old)
    graph = g.instantiate()
    other = GraphDefinition()
    other.callback(Held())
    other.empty()  # another shape: refused
    del old, g
    s = nanocuda.Stream()
    graph.launch(s)
    with pytest.raises(ValueError):
        graph.update(other)
    assert pending_host_functions() == 0
    s.sync()
    gc.collect()
    assert ref() is not None  # the graph still runs it
    del graph
    assert eventually(lambda: ref() is None)


def test_a_stream_closed_after_the_launch_keeps_the_old_set_with_the_graph():
    s = nanocuda.Stream()
    # nothing left to queue the release on once the stream is closed: the Graph keeps the old set
    graph, ref, second = launched_then_updated(s, Held(), between=s.close)
    del second
    if MOCK:
        nanocuda.Device(0).sync()
    gc.collect()
    assert ref() is not None
    assert pending_host_functions() == 0
    del graph
    assert eventually(lambda: ref() is None)


def test_closing_a_stream_with_a_pending_python_callback_completes():
    calls = []
    g = with_callback(Slow(calls, 0.3))
    graph = g.instantiate()
    s = nanocuda.Stream()
    graph.launch(s)
    s.close()  # waits without holding the GIL, which the callback needs
    assert s.is_closed
    assert calls == ([] if MOCK else [1])  # the mock runs no graph nodes
    del graph


# -- GraphBuilder: per-node holds, also in an embedding builder's copy ---------------------------
needs_captured_nodes = pytest.mark.skipif(MOCK, reason="the mock's captures make graphs without nodes")


def built_with_callbacks(*payloads):
    """A finished GraphBuilder whose graph calls each of `payloads` from a host node."""
    b = nanocuda.Device(0).create_graph_builder().begin_building()
    for p in payloads:
        b.callback(p)
    return b.end_building()


def copied_callbacks(parent):
    """The host-callback nodes of the child-graph copy in `parent`'s graph, via its definition view."""
    node = next(n for n in parent.graph_definition.nodes() if isinstance(n, ChildGraphNode))
    return [n for n in node.child_graph.nodes() if isinstance(n, HostCallbackNode)]


@needs_captured_nodes
def test_destroying_an_embedded_builders_callback_node_releases_only_its_payload():
    first, second = Held(), Held()
    ref_first, ref_second = weakref.ref(first), weakref.ref(second)
    child = built_with_callbacks(first, second)
    parent = nanocuda.Device(0).create_graph_builder().begin_building()
    parent.embed(child)
    parent.end_building()
    del first, second, child
    gc.collect()
    assert ref_first() is not None and ref_second() is not None  # the copy holds both
    nodes = copied_callbacks(parent)
    assert len(nodes) == 2
    nodes[0].destroy()
    del nodes
    assert eventually(lambda: (ref_first() is None) != (ref_second() is None))
    del parent
    assert eventually(lambda: ref_first() is None and ref_second() is None)


@needs_captured_nodes
def test_a_graph_completed_before_the_destroy_still_runs_the_embedded_callback():
    calls = []
    child = built_with_callbacks(lambda: calls.append(1))
    parent = nanocuda.Device(0).create_graph_builder().begin_building()
    parent.embed(child)
    parent.end_building()
    graph = parent.complete()
    del child
    copied_callbacks(parent)[0].destroy()
    gc.collect()
    s = nanocuda.Stream()
    graph.launch(s)
    s.sync()
    assert calls == [1]  # the executable took its own reference at instantiation
