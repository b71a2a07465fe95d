"""graph[node].update(args=...) of kernel nodes on the mock driver: the C fast path
(python/ext/launch/bind_graph_exec_node.cpp) and its errors, and Graph.update(i, ...) beside it."""

from mock_run import run_on_mock

PRELUDE = r'''
import nanocuda
from nanocuda.graph import ExecutableKernelNode, GraphDefinition

SRC = 'extern "C" __global__ void k(const float* a, const float* b, float* c, int n) {}'
k = nanocuda.compile(SRC, arch="90").get_kernel("k")
cfg = nanocuda.LaunchConfig(grid=1, block=32)
a, b, c = 0x7F0000001000, 0x7F0000002000, 0x7F0000003000
d = GraphDefinition()
nodes = [d.launch(cfg, k, a, b, c, i) for i in range(3)]
graph = d.instantiate()
views = [graph[n] for n in nodes]

def raises(kind, text, fn):
    try:
        fn()
    except kind as e:
        assert text in str(e), str(e)
        return str(e)
    raise AssertionError(f"no {kind.__name__} ({text!r})")
'''


def check(mock_libcuda, code):
    run_on_mock(mock_libcuda, code, prelude=PRELUDE, version="13.0",  # NVRTC 13 cubins
                NANOCUDA_MOCK_GRAPH_NODES="1")


def test_update_is_the_c_method_and_takes_tuples_lists_and_iterables(mock_libcuda):
    check(mock_libcuda, """
        assert type(ExecutableKernelNode.__dict__["update"]).__name__ == "method_descriptor"
        for v in views:
            v.update(args=(a, b, c, 4))
            v.update(args=[a, b, c, 4])
            v.update(args=iter((a, b, c, 4)))         # the Python half: any iterable
            v.update(config=None, kernel=None, args=(a, b, c, 4))
        assert [v._index for v in views] == [0, 1, 2]  # each view cached its kernel-node index
        graph.update(2, a, b, c, 5)                  # the captured-style update shares the packer
        views[1]._index, views[1]._stamp = -1, 2**70    # a cache spoiled by hand: looked up again
        views[1].update(args=(a, b, c, 4))
        assert views[1]._index == 1
        print("ok")
    """)


def test_wrong_argument_count_and_type_name_the_kernel(mock_libcuda):
    check(mock_libcuda, """
        raises(TypeError, "takes 4 arguments, got 3", lambda: views[0].update(args=(a, b, c)))
        raises(TypeError, "takes 4 arguments, got 5", lambda: views[1].update(args=[a, b, c, 4, 5]))
        raises(TypeError, "parameter 3: cannot pass a str", lambda: views[0].update(args=(a, b, c, "x")))
        views[0].update(args=(a, b, c, 4))             # the slot cache is not left wrong by a failure
        print("ok")
    """)


def test_bad_calls_raise_what_the_python_update_raised(mock_libcuda):
    check(mock_libcuda, """
        v = views[0]
        raises(ValueError, "ExecutableKernelNode.update: args are required", lambda: v.update())
        raises(ValueError, "args are required", lambda: v.update(args=None))
        raises(TypeError, "ExecutableKernelNode.update() takes 1 positional argument", lambda: v.update((a,)))
        raises(TypeError, "ExecutableKernelNode.update() got an unexpected keyword argument 'argz'",
               lambda: v.update(argz=(a,)))
        raises(TypeError, "not iterable", lambda: v.update(args=5))
        print("ok")
    """)


def test_closed_graph_and_destroyed_node(mock_libcuda):
    check(mock_libcuda, """
        v0, v1, v2 = views
        for v in views:
            v.update(args=(a, b, c, 4))                # each view has its index cached now
        nodes[1].destroy()
        raises(ValueError, "KernelNode: the node was destroyed", lambda: v1.update(args=(a, b, c, 4)))
        v2.update(args=(a, b, c, 4))                   # the others look their node up again, and work
        assert v2._index == 2
        graph.close()
        raises(ValueError, "the graph is closed (close() was called)", lambda: v0.update(args=(a, b, c, 4)))
        raises(ValueError, "the graph is closed", lambda: v0.update(config=cfg, args=(a, b, c, 4)))
        print("ok")
    """)


def test_a_node_of_another_definition_is_refused_by_name(mock_libcuda):
    check(mock_libcuda, """
        other = GraphDefinition()
        stranger = other.launch(cfg, k, a, b, c, 4)
        view = graph[stranger]
        for call in (lambda: view.update(args=(a, b, c, 4)),
                     lambda: view.update(args=iter((a, b, c, 4))),
                     lambda: view.update(config=cfg, args=(a, b, c, 4))):
            raises(ValueError, "ExecutableKernelNode.update: node 0x", call)
            raises(ValueError, "is not a kernel node of Graph", call)
        print("ok")
    """)


def test_config_and_kernel_updates_are_kept_by_later_args_only_updates(mock_libcuda):
    check(mock_libcuda, """
        k2 = nanocuda.compile(SRC.replace("void k(", "void k2("), arch="90").get_kernel("k2")
        views[0].update(kernel=k2, config=nanocuda.LaunchConfig(grid=7, block=64), args=(a, b, c, 4))
        # the Graph now packs node 0 against k2 (its name in errors) and keeps grid=7
        raises(TypeError, "kernel 'k2' takes 4 arguments", lambda: views[0].update(args=(a,)))
        views[0].update(args=(a, b, c, 9))
        assert nodes[0].config.grid == (1, 1, 1)       # the definition is unchanged
        print("ok")
    """)
