"""GraphBuilder on a real GPU: conditional loops and branches decided by kernels, forks and
joins, child graphs, explicit nodes, host callbacks, whole-graph update, torch interop, and
every bad input raising a clear error."""

import gc
import threading

import numpy as np
import pytest

import nanocuda

pytestmark = pytest.mark.gpu

SOURCE = r"""
#include <nanocuda/device/graph.cuh>
// Adds 1 to *counter and keeps the loop going while it is below n.
extern "C" __global__ void count_to(nanocuda::conditional_handle h, int* counter, int n) {
  if (threadIdx.x == 0 && blockIdx.x == 0) nanocuda::set_conditional(h, ++*counter < n);
}
extern "C" __global__ void set_value(nanocuda::conditional_handle h, unsigned v) {
  nanocuda::set_conditional(h, v);
}
extern "C" __global__ void store(int* out, int value) { *out = value; }
extern "C" __global__ void add_to(int* out, int value) { atomicAdd(out, value); }
extern "C" __global__ void increment(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}
"""

ONE = nanocuda.LaunchConfig(grid=1, block=1)


@pytest.fixture(scope="module")
def k():
    code = nanocuda.compile(SOURCE)
    return {n: code.get_kernel(n) for n in ("count_to", "set_value", "store", "add_to", "increment")}


def ints(buf, stream, n=None):
    out = np.zeros(buf.size // 4 if n is None else n, np.int32)
    nanocuda.copy(out, buf, stream=stream)
    stream.sync()
    return out


def zeros(n, stream):
    b = nanocuda.Buffer(4 * n, stream=stream)
    nanocuda.memset(b, 0, stream=stream)
    return b


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_while_loop_runs_until_the_kernel_says_stop(k, device, stream, n):
    counter = zeros(1, stream)
    b = device.create_graph_builder().begin_building()
    h = b.create_conditional_handle(default_value=1)
    assert isinstance(h, nanocuda.ConditionalHandle) and h.graph_id == b.graph_id
    body = b.while_loop(h).begin_building()
    nanocuda.launch(body, ONE, k["count_to"], h, counter, n)
    body.end_building()
    graph = b.end_building().complete()
    assert "conditional" in repr(graph)
    graph.launch(stream)
    assert ints(counter, stream)[0] == n
    graph.launch(stream)  # default_value restarts the loop each launch: one more step at least
    assert ints(counter, stream)[0] == n + 1


@pytest.mark.parametrize("cond", [0, 1, 5])
def test_if_cond_and_if_else_take_the_branch_the_kernel_chose(k, device, stream, cond):
    out = zeros(2, stream)
    b = device.create_graph_builder().begin_building()
    h = b.create_conditional_handle()
    nanocuda.launch(b, ONE, k["set_value"], h, cond)
    then_b = b.if_cond(h).begin_building()
    nanocuda.launch(then_b, ONE, k["store"], out, 11)
    then_b.end_building()
    h2 = b.create_conditional_handle()
    nanocuda.launch(b, ONE, k["set_value"], h2, cond)
    yes, no = b.if_else(h2)
    yes.begin_building()
    nanocuda.launch(yes, ONE, k["add_to"], int(out.ptr) + 4, 100)
    yes.end_building()
    no.begin_building()
    nanocuda.launch(no, ONE, k["add_to"], int(out.ptr) + 4, 200)
    no.end_building()
    b.end_building().complete().launch(stream)
    got = ints(out, stream)
    assert got[0] == (11 if cond else 0)
    assert got[1] == (100 if cond else 200)


@pytest.mark.parametrize("choice", [0, 2, 3, 9])
def test_switch_runs_the_chosen_body_only(k, device, stream, choice):
    out = zeros(1, stream)
    b = device.create_graph_builder().begin_building()
    h = b.create_conditional_handle()
    nanocuda.launch(b, ONE, k["set_value"], h, choice)
    bodies = b.switch(h, 4)
    assert len(bodies) == 4
    for i, body in enumerate(bodies):
        body.begin_building()
        nanocuda.launch(body, ONE, k["add_to"], out, 10 ** i)
        body.end_building()
    b.end_building().complete().launch(stream)
    assert ints(out, stream)[0] == (10 ** choice if choice < 4 else 0)


def test_split_join_child_and_explicit_nodes(k, device, stream):
    n = 64
    x, y = zeros(n, stream), zeros(n, stream)
    cfg = nanocuda.LaunchConfig(grid=1, block=n)
    child = device.create_graph_builder().begin_building()
    nanocuda.launch(child, cfg, k["increment"], y, n)
    child.end_building()

    b = device.create_graph_builder().begin_building()
    b.memset(x, 5, n, element_size=4)
    left, right = b.split(2)
    assert left is b and left is not right and right.is_join_required and not b.is_join_required
    nanocuda.launch(left, cfg, k["increment"], x, n)
    nanocuda.launch(right, cfg, k["increment"], y, n)
    joined = nanocuda.GraphBuilder.join(left, right)
    assert joined is b and not joined.is_join_required and not right.is_join_required
    joined.add_child(child)
    tmp = joined.alloc(4 * n)
    joined.memcpy(tmp, x, 4 * n)
    nanocuda.launch(joined, cfg, k["increment"], tmp, n)
    joined.memcpy(y, tmp, 4 * n)
    joined.free(tmp)
    graph = joined.end_building().complete()
    text = graph.topology
    for kind in ("memset", "kernel 'increment'", "child graph", "mem alloc", "memcpy", "mem free"):
        assert kind in text, text
    graph.launch(stream)
    assert (ints(x, stream) == 6).all()
    assert (ints(y, stream) == 7).all()  # x+1 copied over y after the branch and the child


def test_host_callback_runs_in_order_and_its_exception_reaches_sync(k, device, stream):
    out = zeros(1, stream)
    seen = []
    b = device.create_graph_builder().begin_building()
    nanocuda.launch(b, ONE, k["store"], out, 3)
    b.callback(lambda: seen.append(threading.get_ident()))
    graph = b.end_building().complete()
    for _ in range(3):
        graph.launch(stream)
    stream.sync()
    assert len(seen) == 3 and ints(out, stream)[0] == 3

    def boom():
        raise RuntimeError("callback failed on purpose")

    b2 = device.create_graph_builder().begin_building()
    b2.callback(boom)
    g2 = b2.end_building().complete()
    del b2
    gc.collect()  # the graph alone keeps the callable alive
    g2.launch(stream)
    with pytest.raises(nanocuda.CudaError, match="boom raised RuntimeError: callback failed on purpose"):
        stream.sync()
    stream.sync()  # reported once


def test_events_upload_options_and_dot_print(k, device, stream, tmp_path):
    out = zeros(1, stream)
    ev = nanocuda.Event(device=device)
    b = device.create_graph_builder().begin_building()
    nanocuda.launch(b, ONE, k["store"], out, 9)
    b.record_event(ev)
    b.end_building()
    b.debug_dot_print(str(tmp_path / "b.dot"))
    graph = b.complete(nanocuda.GraphCompleteOptions(upload_stream=stream, use_node_priority=True))
    graph.upload(stream)
    graph.launch(stream)
    ev.sync()
    assert ints(out, stream)[0] == 9
    graph.debug_dot_print(str(tmp_path / "g.dot"), nanocuda.GraphDebugPrintOptions(verbose=True))
    assert "digraph" in (tmp_path / "g.dot").read_text()
    w = device.create_graph_builder().begin_building()
    w.wait_event(ev)
    nanocuda.launch(w, ONE, k["store"], out, 10)
    w.end_building().complete(nanocuda.GraphCompleteOptions(auto_free_on_launch=True)).launch(stream)
    assert ints(out, stream)[0] == 10


def test_whole_graph_update_and_shape_mismatch(k, device, stream):
    a, c = zeros(1, stream), zeros(1, stream)

    def build(ptr, value, extra=False):
        b = device.create_graph_builder().begin_building()
        nanocuda.launch(b, ONE, k["store"], ptr, value)
        if extra:
            nanocuda.launch(b, ONE, k["store"], ptr, value)
        return b.end_building()

    graph = build(a, 1).complete()
    graph.launch(stream)
    graph.update(build(c, 2))
    graph.launch(stream)
    assert ints(a, stream)[0] == 1 and ints(c, stream)[0] == 2
    graph.update(build(a, 4).complete())  # a Graph works too
    graph.launch(stream)
    assert ints(a, stream)[0] == 4
    graph.update(0, c, 5)  # per-node update still works after a whole update
    graph.launch(stream)
    assert ints(c, stream)[0] == 5
    with pytest.raises(ValueError, match="Graph.update: cannot update .*topology"):
        graph.update(build(a, 3, extra=True))
    graph.launch(stream)  # unchanged after the failed update
    assert ints(c, stream)[0] == 5
    with pytest.raises(ValueError, match="unfinished"):
        graph.update(device.create_graph_builder())
    with pytest.raises(ValueError, match="expects 4 bytes, got 8"):
        graph.update(0, c, np.int64(1))
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        graph.update(0, c)


def test_bad_input_raises_clear_errors(k, device, stream):
    b = device.create_graph_builder()
    with pytest.raises(ValueError, match="not building"):
        nanocuda.launch(b, ONE, k["store"], 0, 1)  # launching into an unfinished builder
    with pytest.raises(ValueError, match="not building. GraphBuilder.end_building: .*begin_building"):
        b.end_building()
    with pytest.raises(ValueError, match="unfinished"):
        b.complete()
    b.begin_building()
    with pytest.raises(ValueError, match="already building"):
        b.begin_building()
    with pytest.raises(ValueError, match="mode must be"):
        device.create_graph_builder().begin_building("loose")
    with pytest.raises(ValueError, match="unfinished; call end_building"):
        b.complete()
    other = device.create_graph_builder().begin_building()
    o1, o2 = other.split(2)
    with pytest.raises(ValueError, match="belongs to another graph"):
        nanocuda.GraphBuilder.join(b, o2)
    with pytest.raises(ValueError, match="not joined"):
        other.end_building()
    nanocuda.GraphBuilder.join(o1, o2)
    with pytest.raises(ValueError, match="forked, joined.*not building"):
        nanocuda.launch(o2, ONE, k["store"], 0, 1)
    h_other = other.create_conditional_handle()
    with pytest.raises(ValueError, match="belongs to graph"):
        b.while_loop(h_other)
    with pytest.raises(ValueError, match="not made by create_conditional_handle"):
        b.if_cond(123456)
    with pytest.raises(TypeError, match="expected a handle"):
        b.if_cond("h")
    with pytest.raises(TypeError, match="kernel 'store' takes 2 arguments"):
        nanocuda.launch(b, ONE, k["store"], 0)
    with pytest.raises(TypeError, match="fn must be a callable"):
        b.callback(3)
    with pytest.raises(ValueError, match="element_size"):
        b.memset(nanocuda.Buffer(16, stream=stream), 0, 4, element_size=3)
    with pytest.raises(ValueError, match="a builder cannot be added to itself|must be a finished"):
        b.add_child(b)
    other.end_building()
    b.end_building()
    with pytest.raises(ValueError, match="already called"):
        b.end_building()
    assert repr(b).startswith("<nanocuda.GraphBuilder")


@pytest.mark.needs_torch
def test_torch_interop_both_ways(k, device, stream):
    import torch

    x = torch.zeros(64, dtype=torch.int32, device="cuda")
    cfg = nanocuda.LaunchConfig(grid=1, block=64)
    # torch work captured into a nanocuda builder, next to a nanocuda launch
    b = device.create_graph_builder().begin_building()
    ts = torch.cuda.ExternalStream(b.stream.handle)
    with torch.cuda.stream(ts):
        x.add_(2)
    nanocuda.launch(b, cfg, k["increment"], x, 64)
    graph = b.end_building().complete()
    assert torch.all(x == 0)
    # a nanocuda Graph launched on a torch stream
    s = torch.cuda.Stream()
    graph.launch(s)
    s.synchronize()
    assert torch.all(x == 3)
    # nanocuda launches inside torch.cuda.graph
    tg = torch.cuda.CUDAGraph()
    with torch.cuda.graph(tg):
        nanocuda.launch(torch.cuda.current_stream(), cfg, k["increment"], x, 64)
    torch.cuda.synchronize()
    before = x.clone()
    tg.replay()
    torch.cuda.synchronize()
    assert torch.all(x == before + 1)


def test_a_builder_dropped_mid_capture_ends_its_capture(k, device):
    s = device.create_stream()
    b = s.create_graph_builder().begin_building()
    nanocuda.launch(b, ONE, k["store"], 0, 1)  # captured, never run (the graph is discarded)
    del b
    gc.collect()
    out = nanocuda.Buffer(4, stream=s)
    nanocuda.launch(s, ONE, k["store"], out, 7)  # the stream is usable again
    assert ints(out, s)[0] == 7


def test_a_cloned_definition_keeps_its_kernel_and_event(device, stream):
    # A clone made through the driver (as cuda.bindings users do) runs after every Python
    # reference to the definition, its kernel's module and its event is gone.
    import ctypes

    from nanocuda.graph import GraphDefinition

    cuda = ctypes.CDLL("libcuda.so.1")
    code = nanocuda.compile('extern "C" __global__ void noop() {}')
    kernel, event = code.get_kernel("noop"), device.create_event()
    g = GraphDefinition()
    g.launch(ONE, kernel)
    g.record(event)
    clone, exe = ctypes.c_void_p(), ctypes.c_void_p()
    assert cuda.cuGraphClone(ctypes.byref(clone), ctypes.c_void_p(g.handle)) == 0
    del g, kernel, code, event
    gc.collect()
    assert cuda.cuGraphInstantiateWithFlags(ctypes.byref(exe), clone, ctypes.c_ulonglong(0)) == 0
    assert cuda.cuGraphLaunch(exe, ctypes.c_void_p(int(stream.handle))) == 0
    stream.sync()
    assert cuda.cuGraphExecDestroy(exe) == 0
    assert cuda.cuGraphDestroy(clone) == 0
