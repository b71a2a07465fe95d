"""The conformance leftovers on a GPU: arch/uuid strings against the driver, TensorMap.device, a
complex scalar reaching a kernel, and a too-large cooperative grid as a ValueError."""

import numpy as np
import pytest

import nanocuda
from nanocuda import LaunchConfig, Program, ProgramOptions, launch

pytestmark = pytest.mark.gpu


def test_arch_uuid_and_default_target(device):
    cc = device.compute_capability
    assert device.arch == f"{cc.major}{cc.minor}"
    assert device.target_arch.startswith(device.arch)
    assert len(device.uuid) == 36 and device.uuid.count("-") == 4 and not device.uuid.startswith("GPU-")
    # the default compile target is still the arch-specific one
    code = Program('extern "C" __global__ void k() {}', "c++").compile("cubin")
    assert code.get_kernel("k") is not None


def test_tensor_map_device_and_repr(device):
    if device.compute_capability.major < 9:
        pytest.skip("TMA needs sm_90 or newer")
    buf = device.allocate(1024 * 4)
    m = nanocuda.TensorMap.tiled_from_pointer(int(buf.handle), "float32", (1024,), box=(64,), swizzle="none")
    assert m.device == device
    assert repr(m) == "TensorMapDescriptor(tiled, rank=1, dtype=FLOAT32, swizzle=NONE)"


def test_complex_scalar_reaches_the_kernel(device):
    src = r"""
    struct c128 { double re, im; };
    extern "C" __global__ void put(c128* out, c128 v) { *out = v; }
    """
    k = Program(src, "c++", options=ProgramOptions(std="c++17")).compile("cubin").get_kernel("put")
    s = device.create_stream()
    out = nanocuda.LegacyPinnedMemoryResource().allocate(16)  # host-readable, device-writable
    launch(s, LaunchConfig(grid=1, block=1), k, out, 5 - 7j)
    s.sync()
    host = np.from_dlpack(out).view(np.float64)
    assert tuple(host) == (5.0, -7.0)


def test_cooperative_grid_too_large_is_value_error(device):
    src = 'extern "C" __global__ void k() {}'
    k = Program(src, "c++").compile("cubin").get_kernel("k")
    s = device.create_stream()
    cfg = LaunchConfig(grid=device.properties.max_grid_dim_x // 128 + 1, block=128, is_cooperative=True)
    with pytest.raises(ValueError):
        launch(s, cfg, k)
    launch(s, LaunchConfig(grid=1, block=1, is_cooperative=True), k)
    s.sync()
