"""Waits for the device with a pending Python host callback, on a real driver: the syncs, and the
frees that wait (also from garbage collection), complete because the core's wait hooks drop the GIL."""
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu

# In a child process, so a deadlock is a timeout, not a hung test run.
SNIPPET = """
    import time
    import nanocuda
    from nanocuda.graph import GraphDefinition

    calls = []

    def slow():
        time.sleep(0.3)
        calls.append(1)

    g = GraphDefinition()
    g.callback(slow)
    graph = g.instantiate()
    s = nanocuda.Stream()
    objs = {"pinned": nanocuda.PinnedBuffer(64),
            "host": nanocuda.PinnedMemoryResource().allocate(64, stream=s),
            "managed": nanocuda.ManagedMemoryResource(0).allocate(64, stream=s)}
    graph.launch(s)
    CALL
    s.sync()
    assert calls == [1], calls
    print("ok")
"""


@pytest.mark.parametrize("call", ["s.sync()", "nanocuda.Device(0).sync()", "del objs['pinned']",
                                  "objs['host'].close()", "del objs['host']", "objs['managed'].close()",
                                  "del objs['managed']"])
def test_a_wait_with_a_pending_python_callback_completes(call):
    env = {k: v for k, v in os.environ.items() if k != "NANOCUDA_LIBCUDA"}
    code = textwrap.dedent(SNIPPET).replace("CALL", call)
    try:
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=20,
                           cwd="/tmp")
    except subprocess.TimeoutExpired:
        pytest.fail(f"{call} deadlocked with a Python host callback pending")
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
