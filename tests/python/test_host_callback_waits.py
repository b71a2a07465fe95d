"""Calls that wait for the device release the GIL: a queued Python host callback needs it (mock)."""
import pytest

# The mock runs queued host functions on a thread of their own when a call waits for the
# device (stream/context sync, freeing page-locked memory), as the driver does.
WAIT = """
    import ctypes, os, threading
    import nanocuda

    lib = ctypes.CDLL(os.environ["NANOCUDA_LIBCUDA"])
    fn, status = ctypes.c_void_p(), ctypes.c_int()
    assert lib.cuGetProcAddress_v2(b"cuLaunchHostFunc", ctypes.byref(fn), 13000,
                                   ctypes.c_ulonglong(0), ctypes.byref(status)) == 0
    HostFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    launch_host_func = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, HostFn, ctypes.c_void_p)(fn.value)
    calls = []
    callback = HostFn(lambda data: calls.append(1))  # takes the GIL on the mock's thread
    s = nanocuda.Stream()
    pinned = nanocuda.PinnedBuffer(64)
    assert launch_host_func(ctypes.c_void_p(int(s.handle)), callback, None) == 0
    done = threading.Event()

    def wait():
        {call}
        done.set()

    threading.Thread(target=wait, daemon=True).start()
    if not done.wait(20):
        print("the wait deadlocked holding the GIL", flush=True)
        os._exit(3)
    assert calls == [1] and {closed}.is_closed
    print("ok")
"""


@pytest.mark.parametrize("call", ["s.close()", "s.__exit__(None, None, None)", "pinned.close()",
                                  "pinned.__exit__(None, None, None)"])
def test_a_wait_lets_a_pending_python_callback_run(mock_libcuda, call):
    from mock_run import run_on_mock

    closed = call.split(".")[0]  # the object the call closes
    run_on_mock(mock_libcuda, WAIT.replace("{call}", call).replace("{closed}", closed))


# The waits inside a free nobody called by name (garbage collection of a PinnedBuffer, the
# synchronous frees of Buffers from a PinnedMemoryResource or ManagedMemoryResource without a
# pool, at close, with-exit or collection) and the syncs: the core's wait hooks drop the GIL.
HIDDEN = WAIT.replace("""    pinned = nanocuda.PinnedBuffer(64)
""", """    objs = {"pinned": nanocuda.PinnedBuffer(64),
            "host": nanocuda.PinnedMemoryResource().allocate(64, stream=s),
            "managed": nanocuda.ManagedMemoryResource(0).allocate(64, stream=s)}
""").replace("{closed}.is_closed", "{check}")


@pytest.mark.parametrize("call, check", [
    ("del objs['pinned']", "'pinned' not in objs"),
    ("objs['host'].close()", "objs['host'].is_closed"),
    ("objs['host'].__exit__(None, None, None)", "objs['host'].is_closed"),
    ("del objs['host']", "'host' not in objs"),
    ("objs['managed'].close()", "objs['managed'].is_closed"),
    ("del objs['managed']", "'managed' not in objs"),
    ("s.sync()", "not s.is_closed"),                    # the core's syncs drop it too
    ("nanocuda.Device(0).sync()", "not s.is_closed"),
])
def test_a_hidden_wait_lets_a_pending_python_callback_run(mock_libcuda, call, check):
    from mock_run import run_on_mock

    run_on_mock(mock_libcuda, HIDDEN.replace("{call}", call).replace("{check}", check))
