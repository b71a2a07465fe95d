"""host_launch on the mock driver (which runs queued host functions at a stream sync): a Python
callable runs once, in order, and is released after; ctypes functions get their data; bad input."""

from mock_run import run_on_mock

SETUP = """
import ctypes, gc, sys, weakref
import nanocuda
from nanocuda import host_launch
d = nanocuda.Device(0); d.set_current(); s = d.create_stream()
"""


def test_python_callable_runs_once_at_sync_and_is_released(mock_libcuda):
    run_on_mock(mock_libcuda, """
        seen = []
        class Probe:
            def __call__(self):
                seen.append(len(seen))
        p = Probe(); ref = weakref.ref(p)
        host_launch(s, p)
        host_launch(s, lambda: seen.append("second"))
        del p; gc.collect()
        assert ref() is not None and seen == []   # queued: kept alive, not run yet
        s.sync()
        assert seen == [0, "second"], seen         # each ran once, in stream order
        gc.collect()
        assert ref() is None                       # released after its one call
        s.sync()
        assert seen == [0, "second"]
        print("ok")
    """, prelude=SETUP, version="13.0", NANOCUDA_MOCK_STREAMS="1")


def test_exception_is_reported_by_the_next_checked_call(mock_libcuda):
    run_on_mock(mock_libcuda, """
        def boom():
            raise ValueError("from the host function")
        host_launch(s, boom)
        e = raises(s.sync, Exception, "from the host function")
        print("ok")
    """, prelude=SETUP, version="13.0", NANOCUDA_MOCK_STREAMS="1")


def test_ctypes_function_gets_its_copied_user_data(mock_libcuda):
    run_on_mock(mock_libcuda, """
        got = []
        CB = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        fn = CB(lambda p: got.append(ctypes.string_at(p, 3)))
        data = bytearray(b"abc")
        host_launch(s, fn, user_data=data)
        data[:] = b"xyz"            # copied at the call: the function sees the old bytes
        s.sync()
        assert got == [b"abc"], got
        print("ok")
    """, prelude=SETUP, version="13.0", NANOCUDA_MOCK_STREAMS="1")


def test_graph_builder_gets_a_host_node_and_bad_input_is_named(mock_libcuda):
    run_on_mock(mock_libcuda, """
        b = d.create_graph_builder()
        # forwarded to GraphBuilder.callback, whose rule (an active capture) answers
        raises(lambda: host_launch(b, lambda: None), ValueError, "GraphBuilder.callback")
        raises(lambda: host_launch(s, 42), TypeError, "host_launch: fn must be a callable")
        raises(lambda: host_launch(s, lambda: None, user_data=b"x"), ValueError,
               "host_launch: user_data is only supported with ctypes function pointers")
        print("ok")
    """, prelude=SETUP, version="13.0", NANOCUDA_MOCK_STREAMS="1")
