"""DeviceProperties in cuda.core's types (yes/no attributes as bool, the three deprecated ones
cuda.core keeps), and Event's reflected/in-place subtraction, against tools/mock_libcuda.c."""

import os
import subprocess
import sys
import textwrap

import nanocuda


def test_flag_attributes_are_marked_in_the_stubs():
    props = nanocuda.DeviceProperties
    for name in ("gpu_overlap", "can_tex2d_gather", "maximum_texture1d_linear_width"):
        assert getattr(props, name).__doc__, name
    assert "gpu_overlap" in nanocuda.DEVICE_ATTRIBUTES and nanocuda.DEVICE_ATTRIBUTES["gpu_overlap"] == 15


def test_types_on_the_mock(mock_libcuda):
    code = textwrap.dedent("""
        import nanocuda
        p = nanocuda.Device(0).properties
        for name in ("gpu_overlap", "can_tex2d_gather", "concurrent_kernels", "managed_memory",
                     "unified_addressing", "cooperative_launch", "only_partial_host_native_atomic_supported"):
            assert type(getattr(p, name)) is bool, name
        for name in ("maximum_texture1d_linear_width", "max_threads_per_block", "compute_mode", "numa_id",
                     "async_engine_count"):
            assert type(getattr(p, name)) is int, name
        assert type(nanocuda.Device(0).concurrent_kernels) is int  # Device's own accessors stay ints
        assert type(nanocuda.Device(0).pci_bus_id) is str and type(p.pci_bus_id) is int  # as in cuda.core
        e = nanocuda.Device(0).create_stream().record()
        assert e.__rsub__(42) is NotImplemented and e.__isub__(42) is NotImplemented
        try:
            42 - e
        except TypeError:
            pass
        else:
            raise AssertionError("int - Event worked")
        print("ok")
    """)
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                         cwd="/tmp")
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout + out.stderr
