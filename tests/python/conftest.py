"""Shared pytest fixtures: GPU tests skip, with the reason, where there is no device."""

import ctypes
import functools
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# nanobind's list of instances alive at exit is off for users; the tests' child processes
# keep it on, so a binding that leaks fails the checks that read their stderr.
os.environ.setdefault("NANOCUDA_LEAK_WARNINGS", "1")


def _build_mock(out: pathlib.Path) -> str:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("needs a C compiler to build tools/mock_libcuda.c")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(out), str(ROOT / "tools/mock_libcuda.c")],
                   check=True)
    return str(out)


# NANOCUDA_TEST_DRIVER_VERSION=12.4 (scripts/test-driver-versions): the whole run talks to
# tools/mock_libcuda.c reporting that CUDA version, so every CPU test also meets a driver of
# that version; GPU tests skip (the mock runs nothing). Set before nanocuda loads a driver.
MOCK_DRIVER_VERSION = os.environ.get("NANOCUDA_TEST_DRIVER_VERSION", "")
if MOCK_DRIVER_VERSION:
    os.environ["NANOCUDA_LIBCUDA"] = _build_mock(pathlib.Path(tempfile.mkdtemp()) / "libcuda_mock.so")
    os.environ["NANOCUDA_MOCK_DRIVER_VERSION"] = MOCK_DRIVER_VERSION


@functools.lru_cache(maxsize=None)
def gpu_unavailable_reason() -> str:
    import nanocuda

    # Short: pytest's summary repeats it for every skipped test (`nanocuda info` says why).
    if MOCK_DRIVER_VERSION:
        return f"the mock driver (NANOCUDA_TEST_DRIVER_VERSION={MOCK_DRIVER_VERSION}) runs nothing"
    try:
        return "" if nanocuda.Device.count() > 0 else "the driver reports no CUDA device"
    except nanocuda.DriverNotFoundError:
        return "no NVIDIA driver"
    except nanocuda.CudaError as e:
        return e.name


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            reason = gpu_unavailable_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"needs a GPU: {reason}"))
        if item.get_closest_marker("needs_torch") is not None:
            try:
                import torch  # noqa: F401
            except ImportError:
                item.add_marker(pytest.mark.skip(reason="needs PyTorch (not installed)"))
        if item.get_closest_marker("needs_cupy") is not None:
            try:
                import cupy  # noqa: F401
            except ImportError:
                item.add_marker(pytest.mark.skip(reason="needs CuPy (not installed)"))
        if item.get_closest_marker("needs_test_hooks") is not None:
            from testing_hooks import SKIP_REASON, testing_module  # tests/python is on sys.path

            if testing_module() is None:
                item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


@pytest.fixture
def device():
    import nanocuda

    return nanocuda.Device(0)


@pytest.fixture
def stream(device):
    import nanocuda

    s = nanocuda.Stream(device=device)
    yield s
    s.close()


@pytest.fixture(scope="session")
def mock_libcuda(tmp_path_factory):
    """tools/mock_libcuda.c built once: a driver whose calls all succeed and do nothing."""
    return _build_mock(tmp_path_factory.mktemp("mock") / "libcuda_mock.so")


@pytest.fixture(scope="session")
def mock_libnvml(tmp_path_factory):
    """tools/mock_libnvml.c built once: NVML with two fake GPUs and known answers."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("needs a C compiler to build tools/mock_libnvml.c")
    out = tmp_path_factory.mktemp("mock") / "libnvml_mock.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(out), str(ROOT / "tools/mock_libnvml.c")], check=True)
    return str(out)


@pytest.fixture
def nvml(mock_libnvml, monkeypatch):
    """nanocuda.system on mock_libnvml; yields the mock (ctypes) for its counters. The C++ core
    remembers what it loaded: forgotten before and after, so other tests see this machine's real
    NVML (or its absence) again."""
    from testing_hooks import hooks  # noqa: PLC0415 - only the NVML tests need the hooks

    monkeypatch.setenv("NANOCUDA_LIBNVML", mock_libnvml)
    hooks.nvml_reset()
    yield ctypes.CDLL(mock_libnvml)
    hooks.nvml_reset()
