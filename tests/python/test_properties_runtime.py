"""Property tests (Hypothesis) for the runtime surfaces: option classes, memory calls and graph
builder nodes given arbitrary Python values either work or raise TypeError/ValueError that
names the call, never nanobind's signature list, a std::bad_cast or a crash. The options
run here (no driver needed); memory and graph calls run in one child process on
tools/mock_libcuda.c, so a crash fails the test instead of the run."""

import os
import subprocess
import sys
import textwrap

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="property tests need hypothesis (pip install hypothesis)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import nanocuda  # noqa: E402

GENERIC = ("incompatible function arguments", "bad_cast", "__index__", "object is not iterable")

# Anything a careless caller might pass.
anything = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
    st.text(max_size=6), st.binary(max_size=4), st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(-2, 2), max_size=2),
)


def checked(call: str, fn) -> None:
    try:
        fn()
    except (TypeError, ValueError) as e:
        text = str(e)
        assert not any(g in text for g in GENERIC), text
        assert call in text or "Device(" in text, (call, text)  # or the device ordinal's own check


OPTION_CLASSES = {
    "DeviceMemoryResourceOptions": ("ipc_enabled", "max_size", "release_threshold"),
    "VirtualMemoryResourceOptions": ("reserve_size",),
    "GraphCompleteOptions": ("auto_free_on_launch", "upload_stream", "device_launch", "use_node_priority"),
    "GraphDebugPrintOptions": ("verbose", "handles", "kernel_node_params"),
    "EventOptions": ("timing_enabled", "blocking_sync", "ipc_enabled"),
    "StreamOptions": ("nonblocking", "priority"),
}


@settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(OPTION_CLASSES)), st.data())
def test_option_classes_accept_or_name_the_rule(name, data):
    fields = OPTION_CLASSES[name]
    kwargs = {f: data.draw(anything, label=f) for f in data.draw(st.sets(st.sampled_from(fields)), label="fields")}
    checked(name, lambda: getattr(nanocuda, name)(**kwargs))


# The child: draws values for memory and graph calls on the mock driver and applies checked().
CHILD = r'''
import sys
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st
import nanocuda

GENERIC = ("incompatible function arguments", "bad_cast", "__index__", "object is not iterable")
anything = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
    st.text(max_size=6), st.binary(max_size=4), st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(-2, 2), max_size=2))
small = st.one_of(st.integers(-3, 6), anything)
dev = nanocuda.Device(0)
s = nanocuda.Stream()
buf = nanocuda.Buffer(4096, stream=s)
SET = settings(max_examples=int(sys.argv[1]), deadline=None, database=None,
               suppress_health_check=list(HealthCheck))

def checked(call, fn):
    try:
        fn()
    except (TypeError, ValueError, OverflowError) as e:  # OverflowError: Buffer.fill's byte range (cuda.core's)
        text = str(e)
        assert not any(g in text for g in GENERIC), text
        assert call in text or "Device(" in text, (call, text)  # or the device ordinal's own check

@SET
@given(anything, anything, anything)
def memory(value, size, stream):
    checked("memset", lambda: nanocuda.memset(buf, value, size=size))
    checked("copy", lambda: nanocuda.copy(buf, bytearray(4096), size=size))
    checked("copy", lambda: nanocuda.copy(buf, bytearray(4096), stream=stream))
    checked("Buffer", lambda: nanocuda.Buffer(size, stream=s).close())
    checked("Buffer.fill", lambda: buf.fill(value, width=size))
    checked("allocate", lambda: dev.memory_resource.allocate(size, s).close())
    checked("Stream", lambda: nanocuda.Stream(device=value, priority=size))
    checked("DeviceMemoryResource", lambda: nanocuda.DeviceMemoryResource(0, value))

@SET
@given(small, small, small, anything)
def graph(count, value, size, event):
    b = dev.create_graph_builder().begin_building()
    checked("GraphBuilder.memset", lambda: b.memset(buf, value, count, size))
    checked("GraphBuilder.memcpy", lambda: b.memcpy(buf, buf, size))
    checked("GraphBuilder.alloc", lambda: b.alloc(size))
    checked("GraphBuilder.create_conditional_handle", lambda: b.create_conditional_handle(default_value=value))
    checked("GraphBuilder.record_event", lambda: b.record_event(event))
    checked("GraphBuilder.split", lambda: GraphBuilderJoin(b.split(count)))
    b.close()

def GraphBuilderJoin(parts):
    nanocuda.GraphBuilder.join(*parts)

memory()
graph()
print("ok")
'''


def test_memory_and_graph_calls_never_crash_on_the_mock_driver(mock_libcuda):
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), "150"], capture_output=True, text=True,
                         env=env, timeout=600, cwd="/tmp")
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), (out.returncode, out.stdout[-3000:] + out.stderr[-3000:])
