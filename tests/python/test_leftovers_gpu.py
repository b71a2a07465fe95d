"""On a real GPU: set_current with a green context (identity round-trip, close while current),
green streams and their events in the green context, and NVML system events."""

import numpy as np
import pytest

import nanocuda
from nanocuda import ContextOptions, Device, LaunchConfig, SMResourceOptions, launch, system
from nanocuda import compile as nc_compile

pytestmark = pytest.mark.gpu


@pytest.fixture
def green():
    dev = Device(0)
    dev.set_current()
    groups, _ = dev.resources.sm.split(SMResourceOptions(count=None))
    ctx = dev.create_context(ContextOptions(resources=[groups[0]]))
    yield dev, ctx
    dev.set_current()
    if not ctx.is_closed:
        ctx.close()


def test_set_current_swaps_and_returns_the_same_objects(green):
    dev, ctx = green
    prev = dev.set_current(ctx)
    try:
        assert prev == dev.context and not prev.is_green
        with pytest.raises(RuntimeError, match="while it is current"):
            ctx.close()
    finally:
        restored = dev.set_current(prev)
    assert restored is ctx and restored.is_green


def test_green_stream_and_its_event_live_in_the_green_context(green):
    dev, ctx = green
    stream = ctx.create_stream()
    event = stream.record()
    assert stream.context == ctx and event.context == ctx and event.context.is_green
    kernel = nc_compile('extern "C" __global__ void fill(int* p, int v) { p[threadIdx.x] = v; }').get_kernel("fill")
    buf = dev.allocate(4 * 32, stream=stream)
    launch(stream, LaunchConfig(grid=1, block=32), kernel, buf, np.int32(7))
    host = np.zeros(32, np.int32)
    nanocuda.copy(host, buf, stream=stream)
    stream.sync()
    event.sync()
    assert (host == 7).all()
    buf.close(stream)
    stream.close()


def test_system_events_wait_times_out():
    try:
        events = system.register_events([system.typing.SystemEventType.UNBIND])
    except (system.UnknownError, system.NotSupportedError, system.FunctionNotFoundError) as e:
        pytest.skip(f"system events are not available here: {e}")
    with pytest.raises(system.TimeoutError):
        events.wait(timeout_ms=200, buffer_size=1)
