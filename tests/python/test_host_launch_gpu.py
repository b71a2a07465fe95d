"""host_launch on a real GPU: the host function sees the work queued before it and the work
queued after it sees what the function wrote (pinned memory, one stream)."""

import ctypes

import pytest

import nanocuda
from nanocuda import LaunchConfig, LegacyPinnedMemoryResource, host_launch, launch

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __global__ void times_ten_plus(int* v, int add) { v[0] = v[0] * 10 + add; }
"""


def test_host_function_runs_between_the_kernels():
    dev = nanocuda.Device(0)
    dev.set_current()
    k = nanocuda.compile(SOURCE).get_kernel("times_ten_plus")
    s = dev.create_stream()
    buf = LegacyPinnedMemoryResource().allocate(4, stream=s)
    value = ctypes.c_int.from_address(int(buf.handle))
    value.value = 0
    seen = []

    def between():
        seen.append(value.value)  # 0 * 10 + 3 written by the first kernel
        value.value += 1          # the second kernel must see 4

    one = LaunchConfig(grid=1, block=1)
    launch(s, one, k, buf, 3)
    host_launch(s, between)
    launch(s, one, k, buf, 5)
    s.sync()
    assert seen == [3]
    assert value.value == 45
    buf.close(s)
