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
        raises(TypeError, "ExecutableKernelNode.update: args must be a tuple or list", lambda: v.update(args=5))
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


# The driver calls of one update, against the C++ loop's (bench graphs: cpp_graph_update). The
# mock records each cuGraphExecKernelNodeSetParams (tools/mock_libcuda_kset.h).
CALLS = r'''
import ctypes
class KSet(ctypes.Structure):
    _fields_ = [("exec", ctypes.c_void_p), ("node", ctypes.c_void_p), ("func", ctypes.c_void_p),
                ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shared_mem", ctypes.c_uint),
                ("params", ctypes.c_void_p), ("extra", ctypes.c_void_p), ("kern", ctypes.c_void_p),
                ("ctx", ctypes.c_void_p), ("first_param", ctypes.c_ulonglong)]
lib = ctypes.CDLL(MOCK)
calls = ctypes.c_ulonglong.in_dll(lib, "nanocuda_mock_calls")
sets = ctypes.c_ulonglong.in_dll(lib, "nanocuda_mock_kernel_sets")
last = KSet.in_dll(lib, "nanocuda_mock_last_kernel_set")

def driver_calls(fn):
    """(driver calls, kernel-node sets) of fn(), and the last set's arguments (as a tuple)."""
    c, s = calls.value, sets.value
    fn()
    return calls.value - c, sets.value - s, (last.exec, last.node, last.func, tuple(last.grid), tuple(last.block),
                                             last.shared_mem, last.extra, last.kern, last.ctx, last.first_param)
'''


def test_an_update_makes_the_cpp_loops_driver_call_with_its_arguments(mock_libcuda):
    run_on_mock(mock_libcuda, """
        from nanocuda._nanocuda import _bench
        views[2].update(args=(a, b, c, 4))         # first updates: the node's buffer and slots are made
        graph.update(2, a, b, c, 4)
        n, s, cpp = driver_calls(lambda: _bench.cpp_graph_update(graph, a))  # every node, node 2 last
        assert s == 3, s
        for update in (lambda: views[2].update(args=(a, b, c, 4)), lambda: graph.update(2, a, b, c, 4)):
            n, s, ours = driver_calls(update)
            assert (n, s) == (2, 1), (n, s)            # the context check (cuCtxGetCurrent), then that call
            assert ours == cpp, (ours, cpp)            # same graph, node, function, shape, kern, ctx; a first
        assert cpp[6] is None and cpp[-1] == a          # parameter a, kernelParams (not extra)
        print("ok")
    """, prelude=PRELUDE + f"MOCK = {mock_libcuda!r}\n" + CALLS, version="13.0", NANOCUDA_MOCK_GRAPH_NODES="1",
                NANOCUDA_MOCK_KSET_RECORD="1")


def test_the_context_is_made_current_before_the_call_when_it_is_not(mock_libcuda):
    code = """
        views[0].update(args=(a, b, c, 4))             # reads the graph's kernel nodes
        fn = ctypes.c_void_p()
        lib.cuGetProcAddress_v2(b"cuCtxPopCurrent", ctypes.byref(fn), 12000, ctypes.c_ulonglong(0), None)
        pop = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))(fn.value)
        while pop(ctypes.byref(ctypes.c_void_p())) == 0:  # no context current on this thread now
            pass
        n1, s, _ = driver_calls(lambda: views[0].update(args=(a, b, c, 4)))
        assert s == 1, s                               # made current first, so never refused
        lib.cuGetProcAddress_v2(b"cuCtxGetCurrent", ctypes.byref(fn), 12000, ctypes.c_ulonglong(0), None)
        current = ctypes.c_void_p()
        ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))(fn.value)(ctypes.byref(current))
        assert current.value == 0x5000, current        # device 0's primary context
        n2, s, _ = driver_calls(lambda: graph.update(0, a, b, c, 4))
        assert s == 1 and n2 <= n1, (n1, n2, s)        # and left current, as launches leave it
        print("ok")
    """
    run_on_mock(mock_libcuda, code, prelude=PRELUDE + f"MOCK = {mock_libcuda!r}\n" + CALLS, version="13.0",
                NANOCUDA_MOCK_GRAPH_NODES="1",
                NANOCUDA_MOCK_CTX_STACK="1", NANOCUDA_MOCK_KSET_NEEDS_CTX="1", NANOCUDA_MOCK_KSET_RECORD="1")


def test_a_refused_update_names_the_graph_and_node(mock_libcuda):
    run_on_mock(mock_libcuda, """
        e = raises(RuntimeError, "CUDA_ERROR_ILLEGAL_ADDRESS", lambda: views[1].update(args=(a, b, c, 4)))
        assert "(Graph 0x" in e and "kernel node 1 (" in e, e   # the mock's kernels have no names
        raises(RuntimeError, "kernel node 2 (", lambda: graph.update(2, a, b, c, 4))
        print("ok")
    """, prelude=PRELUDE, version="13.0", NANOCUDA_MOCK_GRAPH_NODES="1",
                NANOCUDA_MOCK_FAIL="cuGraphExecKernelNodeSetParams:700")


def test_an_argument_calling_back_into_the_graph_while_packing(mock_libcuda):
    run_on_mock(mock_libcuda, """
        class CallsBack:                               # its conversion runs Python code mid-pack
            def __init__(self, fn):
                self.fn = fn
            @property
            def __cuda_array_interface__(self):
                self.fn()
                return {"data": (a, False), "shape": (4,), "typestr": "<f4", "version": 3}
        # The same node again: the nested update packs into storage of its own; both land.
        views[0].update(args=(CallsBack(lambda: views[0].update(args=(a, b, c, 5))), b, c, 4))
        graph.update(1, CallsBack(lambda: graph.update(1, a, b, c, 5)), b, c, 4)
        # What would free the buffer being packed is refused, and the graph stays usable.
        def close():
            raises(ValueError, "Graph.close: a kernel-node update of this graph is packing", graph.close)
        def rekernel():
            raises(ValueError, "is packing the arguments of a kernel-node update",
                   lambda: views[1].update(config=cfg, kernel=k, args=(a, b, c, 4)))
        for fn in (close, rekernel):
            views[1].update(args=(CallsBack(fn), b, c, 4))
        views[1].update(args=(a, b, c, 4))
        graph.close()
        print("ok")
    """, prelude=PRELUDE, version="13.0", NANOCUDA_MOCK_GRAPH_NODES="1", NANOCUDA_MOCK_POINTER="device")


def test_buffer_arguments_pack_their_pointer_and_a_closed_one_is_refused(mock_libcuda):
    # A Buffer (exact type) is read in place (arg_pack's Buffer kind); the unusual cases take
    # the generic pointer path and its errors.
    run_on_mock(mock_libcuda, """
        s = nanocuda.Stream.legacy(nanocuda.Device(0))
        buf = nanocuda.Buffer(64, stream=s)
        for update in (lambda x: views[2].update(args=(x, b, c, 4)), lambda x: graph.update(2, x, b, c, 4)):
            update(a)                                  # the slot saw an int first, then a Buffer
            for _ in range(2):
                n, count, ours = driver_calls(lambda: update(buf))
                assert count == 1 and ours[-1] == buf.ptr, (count, ours)
        other = nanocuda.Buffer(64, stream=nanocuda.Stream.legacy(nanocuda.Device(1)))
        raises(ValueError, "is on device 1, but this call runs on device 0", lambda: graph.update(2, other, b, c, 4))
        run = k.bind(cfg, stream=s)
        run(buf, buf, buf, 4)
        raises(ValueError, "parameter 3: expects 4 bytes, got 8", lambda: run(a, b, c, buf))  # for the int n
        buf.close()
        for call in (lambda: views[2].update(args=(buf, b, c, 4)), lambda: graph.update(2, buf, b, c, 4),
                     lambda: run(buf, b, c, 4)):
            raises(ValueError, "closed", call)
        print("ok")
    """, prelude=PRELUDE + f"MOCK = {mock_libcuda!r}\n" + CALLS, version="13.0", NANOCUDA_MOCK_GRAPH_NODES="1",
                NANOCUDA_MOCK_KSET_RECORD="1", NANOCUDA_MOCK_DEVICES="2")
