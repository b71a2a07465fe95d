"""cuda.core's behaviour in the conformance leftovers (issue 23): Device.arch/uuid strings, TensorMap
construction/repr/device, complex kernel scalars, Stream.wait's error, boolean conditions."""

import struct

import pytest

import nanocuda
from testing_hooks import hooks


from mock_run import run_on_mock  # noqa: E402  (tests/python is on sys.path)


PRELUDE = """
    import re
    import nanocuda
    from nanocuda import Device, TensorMap
"""


def test_arch_and_uuid_are_cuda_cores_strings(mock_libcuda):
    """arch is major*10+minor ("90", what code written for cuda.core compares), target_arch keeps
    nanocuda's compile target ("90a"); uuid has no "GPU-" prefix."""
    run_on_mock(mock_libcuda, PRELUDE + """
    d = Device(0)
    assert tuple(d.compute_capability) == (9, 0)
    assert d.arch == "90" and d.target_arch == "90a"
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", d.uuid), d.uuid
    # nanocuda's default compile target stays the arch-specific one
    assert nanocuda.ProgramOptions().resolved_arch if hasattr(nanocuda.ProgramOptions(), "resolved_arch") else True
    print("ok")
    """, NANOCUDA_MOCK_CC="9.0")
    run_on_mock(mock_libcuda, PRELUDE + """
    d = Device(0)
    assert d.arch == "86" and d.target_arch == "86"
    print("ok")
    """, NANOCUDA_MOCK_CC="8.6")


def test_tensor_map_front_door_repr_and_device(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    raises(TensorMap, RuntimeError, "cannot be instantiated directly", "TensorMap.tiled")
    raises(nanocuda.TensorMapDescriptor, RuntimeError, "cannot be instantiated directly")
    ptr = 0x7f0000000000
    m = TensorMap.tiled_from_pointer(ptr, "float32", (1024,), box=(64,), swizzle="none")
    assert repr(m) == "TensorMapDescriptor(tiled, rank=1, dtype=FLOAT32, swizzle=NONE)", repr(m)
    assert str(m).startswith("TensorMap.tiled("), str(m)  # str keeps the full geometry
    m2 = TensorMap.tiled_from_pointer(ptr, "float16", (64, 64), box=(64, 64), swizzle="128B")
    assert repr(m2) == "TensorMapDescriptor(tiled, rank=2, dtype=FLOAT16, swizzle=SWIZZLE_128B)", repr(m2)
    assert m.device == Device(0)  # the mock places every address on device 0
    print("ok")
    """, NANOCUDA_MOCK_POINTER="device")
    run_on_mock(mock_libcuda, PRELUDE + """
    m = TensorMap.tiled_from_pointer(0x7f0000000000, "float32", (1024,), box=(64,))
    raises(lambda: m.device, ValueError, "TensorMap.device", "0x7f0000000000", "no device")
    print("ok")
    """, NANOCUDA_MOCK_POINTER="pageable")


def test_python_complex_is_two_doubles():
    pack = hooks.pack_args  # skips where the build has no test hooks (a wheel)
    out = pack([(0, 16), (16, 4)], "k", 5 - 7j, 3)
    assert struct.unpack_from("<dd", out, 0) == (5.0, -7.0)
    assert struct.unpack_from("<i", out, 16)[0] == 3
    with pytest.raises(TypeError, match="parameter 0 is 8 bytes; a Python complex is 16"):
        pack([(0, 8)], "k", 1 + 2j)  # 16 bytes do not fit an 8-byte parameter


def test_stream_wait_and_boolean_conditions(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    d = Device(0); d.set_current()
    s = d.create_stream()
    raises(lambda: s.wait("invalid_event"), ValueError, "Stream.wait", "str")
    raises(lambda: s.wait(12345), TypeError, "Stream.wait")  # a bare int: how to adopt a handle
    b = d.create_graph_builder().begin_building()
    # A bool passes the argument check (True/False are 1/0); the mock driver reports no active
    # capture, so what follows is the capture check speaking, never a TypeError about the value.
    for flag in (True, False):
        raises(lambda: b.create_condition(default_value=flag), ValueError, "capture")
    raises(lambda: b.create_condition(default_value="1"), TypeError, "default_value must be an int")
    print("ok")
    """)


def test_cooperative_too_large_is_a_value_error():
    from nanocuda._errors import CooperativeLaunchTooLargeError, CudaError
    assert issubclass(CooperativeLaunchTooLargeError, CudaError)
    assert issubclass(CooperativeLaunchTooLargeError, ValueError)


def test_cooperative_launch_too_large_raises_value_error(mock_libcuda):
    """The driver's CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE (720) reaches Python as a CudaError that
    is also a ValueError (a grid too large is a bad argument), as cuda.core raises."""
    run_on_mock(mock_libcuda, PRELUDE + """
    from nanocuda._errors import CooperativeLaunchTooLargeError, CudaError
    d = Device(0); d.set_current(); s = d.create_stream()
    src = 'extern "C" __global__ void k3(const float* a, float* b, float* c, int n) {}'
    k = nanocuda.compile(src, arch="sm_90a").get_kernel("k3")
    cfg = nanocuda.LaunchConfig(grid=1 << 24, block=128, is_cooperative=True)
    e = raises(lambda: nanocuda.launch(s, cfg, k, 0, 0, 0, 4), ValueError, "COOPERATIVE_LAUNCH_TOO_LARGE")
    assert isinstance(e, CooperativeLaunchTooLargeError) and isinstance(e, CudaError) and e.code == 720
    print("ok")
    """, NANOCUDA_MOCK_FAIL="cuLaunchKernelEx:720",
       NANOCUDA_MOCK_DRIVER_VERSION="13.0")  # NVRTC 13 code, also under test-driver-versions
