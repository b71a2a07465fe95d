"""graph[node].update on a real GPU: the C fast path (args only) writes the new arguments into
the executable graph, keeps a kernel/configuration given earlier, and survives a whole-graph update."""

import numpy as np
import pytest

import nanocuda
from nanocuda.graph import GraphDefinition

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __global__ void store(int* out, int value) { *out = value; }
extern "C" __global__ void add_to(int* out, int value) { atomicAdd(out, value); }
"""
ONE = nanocuda.LaunchConfig(grid=1, block=1)


@pytest.fixture(scope="module")
def k():
    code = nanocuda.compile(SOURCE)
    return {n: code.get_kernel(n) for n in ("store", "add_to")}


@pytest.fixture
def s():
    return nanocuda.Device(0).create_stream()


def read(buf, s, n=1):
    out = np.zeros(n, np.int32)
    nanocuda.copy(out, buf, stream=s)
    s.sync()
    return out


def test_args_only_updates_of_100_nodes(k, s):
    out = nanocuda.Buffer(400, stream=s)
    g = GraphDefinition()
    nodes = [g.launch(ONE, k["store"], out.ptr + 4 * i, 0) for i in range(100)]
    graph = g.instantiate()
    views = [graph[n] for n in nodes]
    for i, v in enumerate(views):
        v.update(args=(out.ptr + 4 * i, i * 3))
    graph.launch(s)
    assert list(read(out, s, 100)) == [i * 3 for i in range(100)]
    for i, v in enumerate(views):
        v.update(args=[out.ptr + 4 * (99 - i), i])      # a list; each node now stores elsewhere
    graph.launch(s)
    assert list(read(out, s, 100)) == [99 - i for i in range(100)]


def test_a_new_kernel_is_kept_by_later_args_only_updates(k, s):
    out = nanocuda.Buffer(4, stream=s)
    g = GraphDefinition()
    node = g.launch(ONE, k["store"], out, 1)
    graph = g.instantiate()
    graph[node].update(kernel=k["add_to"], args=(out, 5))
    nanocuda.memset(out, 0, stream=s)
    graph.launch(s)
    assert read(out, s)[0] == 5
    graph[node].update(args=(out, 2))                   # still add_to
    graph.launch(s)
    assert read(out, s)[0] == 7


def test_args_updates_after_a_whole_graph_update(k, s):
    out = nanocuda.Buffer(4, stream=s)
    g = GraphDefinition()
    node = g.launch(ONE, k["store"], out, 1)
    graph = g.instantiate()
    g2 = GraphDefinition()
    g2.launch(ONE, k["store"], out, 2)
    graph.update(g2)
    graph.launch(s)
    assert read(out, s)[0] == 2
    graph[node].update(args=(out, 11))                  # the original node handle still names it
    graph.launch(s)
    assert read(out, s)[0] == 11
