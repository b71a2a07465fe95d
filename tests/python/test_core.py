"""The Python layer without a GPU: import, errors, dtype and array parsing, the CLI."""

import subprocess
import sys

import numpy as np
import pytest

import nanocuda
from testing_hooks import hooks


def test_import_does_not_load_the_driver():
    # A fresh interpreter: importing must not dlopen libcuda (checked via /proc/self/maps).
    code = (
        "import nanocuda\n"
        "maps = open('/proc/self/maps').read()\n"
        "assert 'libcuda.so' not in maps, 'import loaded the driver'\n"
        "print('clean')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "clean" in out.stdout


def test_missing_driver_is_a_clear_catchable_error():
    code = (
        "import nanocuda\n"
        "try:\n"
        "    nanocuda.Device(0)\n"
        "except nanocuda.DriverNotFoundError as e:\n"
        "    print('caught', e.name, e.code, e.call)\n"
        "    print(e)\n"
    )
    env = {"NANOCUDA_LIBCUDA": "/nonexistent/libcuda.so.1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "caught CUDA_ERROR_NO_DEVICE 100 load_driver" in out.stdout
    assert "no NVIDIA driver found" in out.stdout
    assert "/nonexistent/libcuda.so.1" in out.stdout


def test_error_hierarchy():
    assert issubclass(nanocuda.DriverNotFoundError, nanocuda.CudaError)
    assert issubclass(nanocuda.CudaError, RuntimeError)
    assert issubclass(nanocuda.CudaError, nanocuda.NanocudaError)


def test_result_names_without_driver():
    assert nanocuda.result_name(1) == "CUDA_ERROR_INVALID_VALUE"
    assert nanocuda.result_name(700) == "CUDA_ERROR_ILLEGAL_ADDRESS"
    assert "out of memory" in nanocuda.result_description(2) or "allocate" in nanocuda.result_description(2)


def test_device_attribute_table():
    attrs = nanocuda.DEVICE_ATTRIBUTES
    assert attrs["max_threads_per_block"] == 1
    assert attrs["multiprocessor_count"] == 16
    assert len(attrs) > 120
    # Every attribute is a property of Device.
    for name in attrs:
        assert isinstance(getattr(nanocuda.Device, name), property), name


@pytest.mark.parametrize(
    "spec,name",
    [
        ("float16", "float16"),
        ("half", "float16"),
        ("f4", "float32"),
        (np.float16, "float16"),
        (np.dtype("int8"), "int8"),
        ("bfloat16", "bfloat16"),
        ("torch.bfloat16", "bfloat16"),
        ("uint64", "uint64"),
    ],
)
def test_dtype_parsing(spec, name):
    assert hooks.parse_dtype(spec) == name


def test_unknown_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="unsupported dtype float7"):
        hooks.parse_dtype("float7")


def test_cpu_array_is_rejected_where_a_device_pointer_is_expected():
    a = np.zeros((4, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="expected device memory.*the CPU"):
        hooks.device_pointer(a)


def test_unrelated_object_is_a_type_error():
    with pytest.raises(TypeError, match="expected a device pointer.*got str"):
        hooks.device_pointer("hello")


def test_int_is_a_raw_address():
    assert hooks.device_pointer(0x7F0000001000) == 0x7F0000001000


def test_describe_host_array_via_dlpack():
    a = np.arange(24, dtype=np.float16).reshape(2, 3, 4)[:, ::-1, :]
    d = hooks.describe_array(a)
    assert d["device_type"] == 1  # kDLCPU
    assert d["dtype"] == "float16"
    assert d["shape"] == (2, 3, 4)
    assert d["strides"] == (12, -4, 1)
    assert d["contiguous"] is False


class FakeDLPackOnCuda:
    """A producer of a DLPack capsule claiming CUDA memory, built on the CPU side."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (1, 0)


def test_describe_dlpack_object():
    a = np.zeros((8, 16), dtype=np.int8)
    d = hooks.describe_array(FakeDLPackOnCuda(a))
    assert d["shape"] == (8, 16) and d["strides"] == (16, 1) and d["dtype"] == "int8"
    assert d["ptr"] == a.ctypes.data


def test_cli_info_without_driver():
    env = {"NANOCUDA_LIBCUDA": "/nonexistent/libcuda.so.1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-m", "nanocuda", "info"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 1
    assert "no NVIDIA driver found" in out.stdout
    assert "Traceback" not in out.stderr
    out = subprocess.run(
        [sys.executable, "-m", "nanocuda", "info", "--allow-missing-driver"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert out.returncode == 0
