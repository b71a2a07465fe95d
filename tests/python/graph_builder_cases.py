"""GraphBuilder lifecycle cases for the mock driver (tools/mock_libcuda.c models stream capture,
user objects and cuGraphClone): captures ended on drop/close, state errors, split/join identity,
keepalives carried by cloned graphs. Run by test_graph_builder.py in a process of its own."""

import ctypes
import gc
import os
import weakref

import pytest

import nanocuda
from nanocuda.graph import GraphDefinition


@pytest.fixture
def device():
    return nanocuda.Device(0)


def test_dropping_a_builder_mid_capture_ends_the_capture(device):
    stream = device.create_stream()
    b = stream.create_graph_builder().begin_building()
    with pytest.raises(nanocuda.CudaError, match="STREAM_CAPTURE_UNSUPPORTED"):
        stream.sync()  # the mock refuses, as the driver does, while capturing
    del b
    gc.collect()
    stream.sync()  # the capture ended with the builder
    again = stream.create_graph_builder().begin_building()
    again.end_building()


def test_close_mid_capture_ends_the_capture_and_is_idempotent(device):
    stream = device.create_stream()
    b = stream.create_graph_builder().begin_building()
    b.close()
    b.close()
    stream.sync()
    assert b.is_closed and not b.is_building
    with pytest.raises(RuntimeError, match="^Graph builder has been closed. GraphBuilder.begin_building"):
        b.begin_building()


def test_state_errors_are_runtime_and_value_errors_with_cuda_core_wording(device):
    b = device.create_graph_builder()
    with pytest.raises(RuntimeError, match=r"^Graph has not finished building\. GraphBuilder.complete: .*begin_building"):
        b.complete()
    with pytest.raises(ValueError, match=r"^Graph builder must be building before it can be split\."):
        b.split(2)
    b.begin_building()
    with pytest.raises(RuntimeError, match=r"^Graph builder is already building\."):
        b.begin_building()
    with pytest.raises(ValueError, match=r"^Graph has not finished building\..*end_building"):
        b.complete()
    with pytest.raises(ValueError, match=r"^Invalid split count: expecting >= 2, got 1"):
        b.split(1)
    b.end_building()
    with pytest.raises(RuntimeError, match=r"^Cannot resume building after building has ended\."):
        b.begin_building()
    assert isinstance(b.complete(), nanocuda.Graph)


def test_split_and_join_return_the_same_python_objects(device):
    b = device.create_graph_builder().begin_building()
    assert b.is_join_required is False
    first = b.split(3)
    assert first[0] is b and not b.is_join_required
    assert all(f.is_join_required for f in first[1:])
    inner = first[2].split(2)
    assert inner[0] is first[2] and all(f.is_join_required for f in inner)
    with pytest.raises(ValueError, match=r"^Must join with at least two graph builders"):
        nanocuda.GraphBuilder.join(inner[0])
    with pytest.raises(TypeError, match="GraphBuilder.join: every argument must be a GraphBuilder, got int"):
        nanocuda.GraphBuilder.join(b, 3)
    j = nanocuda.GraphBuilder.join(*inner)
    assert j is inner[0] and j.is_join_required  # all forked: the result still needs a join
    assert nanocuda.GraphBuilder.join(first[1], j, b) is b
    assert not any(f.is_join_required for f in first)
    with pytest.raises(RuntimeError, match=r"^Graph builder has been closed\..*joined"):
        first[1].complete()
    b.end_building()


def test_graph_close_twice_and_handle_after_close(device):
    b = device.create_graph_builder().begin_building()
    graph = b.end_building().complete()
    b.close()
    graph.close()
    graph.close()
    assert graph.is_closed and int(graph.handle) == 0


class _Pinned:
    pass


def test_cloned_graph_keeps_the_definitions_keepalives(device):
    mock = ctypes.CDLL(os.environ["NANOCUDA_LIBCUDA"])
    g = GraphDefinition()
    obj = _Pinned()
    g._core.keep_alive(obj)
    ref = weakref.ref(obj)
    clone = ctypes.c_void_p()
    assert mock.cuGraphClone(ctypes.byref(clone), ctypes.c_void_p(g.handle)) == 0
    del obj, g
    gc.collect()
    assert ref() is not None  # the clone's user object holds it
    assert mock.cuGraphDestroy(clone) == 0
    for _ in range(3):  # released on the main thread by a pending call
        gc.collect()
    assert ref() is None


def test_keepalives_released_with_the_definition_when_never_cloned(device):
    g = GraphDefinition()
    obj = _Pinned()
    g._core.keep_alive(obj)
    ref = weakref.ref(obj)
    del obj, g
    for _ in range(3):
        gc.collect()
    assert ref() is None


def test_the_cores_rules_reach_python_with_python_names(device):
    # Build mode, memset/memcpy extents and the legacy-stream refusal are the core's rules
    # (C++ names in C++); Python reads them under its own call names, nothing "::" left over.
    b = device.create_graph_builder()
    with pytest.raises(ValueError, match=r"^Unsupported build mode: 'fast' \(GraphBuilder\.begin_building: mode must"):
        b.begin_building("fast")
    with pytest.raises(ValueError, match=r"^Unsupported build mode: 3 \(GraphBuilder\.begin_building:"):
        b.begin_building(3)
    b.begin_building("thread_local")
    small = device.allocate(64)
    with pytest.raises(ValueError, match=r"^GraphBuilder\.memset: 20 elements of 4 bytes go past the end of the "
                                         r"destination \(64 bytes\)"):
        b.memset(small, 0, 20, 4)
    b.memset(small, 0, 16, 4)
    with pytest.raises(ValueError, match=r"^GraphBuilder\.memcpy: nbytes 65 is past the end of dst \(64 bytes\) "
                                         r"or src \(64 bytes\)"):
        b.memcpy(small, small, 65)
    b.end_building()
    with pytest.raises(ValueError, match=r"legacy default stream cannot be captured; build on a Stream of its own "
                                         r"\(Device\.create_stream\)") as e:
        nanocuda.Stream.legacy(device).create_graph_builder().begin_building()
    assert "::" not in str(e.value)
