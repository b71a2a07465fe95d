"""The default-device rule on a real GPU: calls that leave the device out use Device()."""

import pytest

import nanocuda

pytestmark = pytest.mark.gpu


def test_left_out_devices_are_the_current_device():
    for ordinal in range(min(nanocuda.Device.count(), 2)):
        d = nanocuda.Device(ordinal)
        d.set_current()
        assert nanocuda.Device() is d
        buf = nanocuda.Buffer(64)
        assert buf.device is d and buf.memory_resource is d.memory_resource
        assert nanocuda.Stream().device is d
        assert nanocuda.Stream.legacy().device is d
    nanocuda.Device(0).set_current()


def test_kernel_defaults_follow_the_current_device():
    src = 'extern "C" __global__ void k(int* p) { if (p) *p = 1; }'
    kernel = nanocuda.Program(src, code_type="c++").compile("cubin").get_kernel("k")
    d = nanocuda.Device(0)
    d.set_current()
    assert kernel.attributes.device.device_id == d.device_id
    launcher = kernel.bind(nanocuda.LaunchConfig(grid=1, block=1))
    out = nanocuda.Buffer(4)
    launcher(out)  # on the current device's legacy stream
    d.sync()

