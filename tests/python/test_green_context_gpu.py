"""Green contexts on a real GPU: split the device's SMs, make a green context per group,
launch on its streams and check (by %smid) that blocks ran only on that many SMs."""

import numpy as np
import pytest

import nanocuda
from nanocuda import ContextOptions, Device, LaunchConfig, SMResourceOptions, launch
from nanocuda import compile as nc_compile

pytestmark = pytest.mark.gpu

KERNEL = r"""
extern "C" __global__ void which_sm(unsigned* out, int n) {
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  // Keep each block busy a little, so many SMs would be used if the partition allowed.
  for (volatile int i = 0; i < 20000; ++i) {}
  if (threadIdx.x == 0 && blockIdx.x < n) out[blockIdx.x] = sm;
}
"""


def _sms_used(dev, stream, kernel, blocks=2048):
    out = dev.allocate(4 * blocks, stream=stream)
    launch(stream, LaunchConfig(grid=blocks, block=64), kernel, out, np.int32(blocks))
    host = np.zeros(blocks, np.uint32)
    nanocuda.copy(host, out, stream=stream)
    stream.sync()
    return set(host.tolist())


@pytest.fixture(scope="module")
def kernel():
    return nc_compile(KERNEL).get_kernel("which_sm")


def test_device_sm_resource_matches_properties():
    dev = Device(0)
    sm = dev.resources.sm
    assert sm.sm_count == dev.properties.multiprocessor_count
    assert sm.min_partition_size >= 2 and sm.coscheduled_alignment >= 2
    groups, rest = sm.split(SMResourceOptions(count=None))
    assert len(groups) == 1 and groups[0].sm_count >= sm.min_partition_size
    assert groups[0].sm_count % sm.coscheduled_alignment == 0
    dry, _ = sm.split(SMResourceOptions(count=None), dry_run=True)
    assert dry[0].sm_count == groups[0].sm_count


def test_green_stream_runs_on_its_partition(kernel):
    dev = Device(0)
    dev.set_current()
    sm = dev.resources.sm
    count = max(16, sm.min_partition_size)
    groups, rest = sm.split(SMResourceOptions(count=(count, count)))
    assert [g.sm_count for g in groups] == [groups[0].sm_count] * 2
    assert groups[0].sm_count + groups[1].sm_count + rest.sm_count <= sm.sm_count
    contexts = [dev.create_context(ContextOptions(resources=[g])) for g in groups]
    try:
        used = []
        for ctx, group in zip(contexts, groups):
            assert ctx.is_green and ctx.resources.sm.sm_count == group.sm_count
            s = ctx.create_stream()
            assert s.context == ctx and s.resources.sm.sm_count == group.sm_count
            sms = _sms_used(dev, s, kernel)
            # cuda.h: on 9.x a loaded CDP module may add 2 SMs; nothing here uses CDP.
            assert 0 < len(sms) <= group.sm_count, (len(sms), group.sm_count)
            used.append(sms)
            s.close()
        assert not (used[0] & used[1]), "two green contexts of disjoint groups shared an SM"
        # The primary context is not limited: the same launch there reaches more SMs.
        primary = dev.create_stream()
        assert len(_sms_used(dev, primary, kernel)) > groups[0].sm_count
        primary.close()
    finally:
        for ctx in contexts:
            ctx.close()
    assert all(ctx.is_closed for ctx in contexts)


def test_close_while_current_raises():
    dev = Device(0)
    groups, _ = dev.resources.sm.split(SMResourceOptions(count=None))
    ctx = dev.create_context({"resources": [groups[0]]})
    handle = ctx.handle
    import ctypes
    libcuda = ctypes.CDLL("libcuda.so.1")
    assert libcuda.cuCtxSetCurrent(ctypes.c_void_p(handle)) == 0
    try:
        with pytest.raises(RuntimeError, match="while it is current"):
            ctx.close()
    finally:
        dev.set_current()
    ctx.close()
    assert ctx.is_closed


def test_close_after_launching_on_its_stream(kernel):
    # A launch leaves its stream's context current; closing the green context afterwards
    # (never made current by the user) puts the primary back, with a live stream and buffer.
    dev = Device(0)
    dev.set_current()
    groups, _ = dev.resources.sm.split(SMResourceOptions(count=None))
    ctx = dev.create_context(ContextOptions(resources=[groups[0]]))
    s = ctx.create_stream()
    assert 0 < len(_sms_used(dev, s, kernel)) <= groups[0].sm_count
    ctx.close()
    assert ctx.is_closed
    with pytest.raises(RuntimeError, match="closed"):
        ctx.create_stream()
    current = dev.set_current(dev.context)  # pops what was current
    assert current == dev.context and not current.is_green
    s.sync()  # the stream outlives close(): the context goes when the stream does
    del s
    dev.sync()
