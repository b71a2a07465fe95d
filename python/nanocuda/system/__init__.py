"""System information in cuda.core's shape (`cuda.core.system`): NVML devices and versions.

Device, the versions and events go through NVML (libnvidia-ml.so.1, part of the NVIDIA
driver), which the C++ core loads on first use; the user-mode version and the device count
come from the CUDA driver, and process names from /proc. Importing this module touches
neither library nor the GPU; CUDA_BINDINGS_NVML_IS_COMPATIBLE is the one name that tries
NVML, when read.
"""

from __future__ import annotations

import os

from .. import _nanocuda
from . import typing
from ._device import Device, NvlinkInfo
from ._system_events import RegisteredSystemEvents, SystemEvent, SystemEvents, register_events
from .exceptions import *  # noqa: F403 - cuda.core.system exports them all
from .exceptions import NvmlError, _from_code
from .exceptions import __all__ as _exceptions_all

__all__ = [
    "CUDA_BINDINGS_NVML_IS_COMPATIBLE",
    "Device",
    "NvlinkInfo",
    "RegisteredSystemEvents",
    "SystemEvent",
    "SystemEvents",
    "get_driver_branch",
    "get_driver_version",
    "get_driver_version_full",
    "get_kernel_mode_driver_version",
    "get_num_devices",
    "get_nvml_version",
    "get_process_name",
    "get_user_mode_driver_version",
    "register_events",
    *_exceptions_all,
]


def _nvml_available() -> bool:
    try:
        _nanocuda._internal.nvml_initialize()
    except NvmlError:
        return False
    return True


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.strip().split(".") if p.isdigit())


def get_user_mode_driver_version() -> tuple[int, int]:
    """The CUDA (user-mode) driver version as (major, minor), e.g. (13, 0)."""
    v = _nanocuda.driver_version()
    return (v // 1000, (v % 1000) // 10)


def get_kernel_mode_driver_version() -> tuple[int, ...]:
    """The kernel-mode (GPU) driver version from NVML, e.g. (580, 65, 6); a RuntimeError
    (nanocuda.system.LibraryNotFoundError) saying it requires NVML support where there is none."""
    return _version_tuple(_nanocuda._internal.nvml_driver_version())


def get_nvml_version() -> tuple[int, ...]:
    """The NVML library's version, e.g. (13, 580, 65, 6): CUDA major, then the driver's."""
    return _version_tuple(_nanocuda._internal.nvml_version())


def get_driver_branch() -> str:
    """The NVIDIA driver's branch, e.g. 'r580_00'."""
    return _nanocuda._internal.nvml_driver_branch()


def get_driver_version(kernel_mode: bool = False) -> tuple[int, int]:
    """(major, minor) of the user-mode CUDA driver, or of the kernel-mode driver."""
    if kernel_mode:
        return tuple(get_kernel_mode_driver_version()[:2])  # type: ignore[return-value]
    return get_user_mode_driver_version()


def get_driver_version_full(kernel_mode: bool = False) -> tuple[int, int, int]:
    """(major, minor, patch). The CUDA driver reports no patch level (it is 0 here)."""
    if kernel_mode:
        v = get_kernel_mode_driver_version()
        return (v + (0, 0, 0))[:3]  # type: ignore[return-value]
    return get_user_mode_driver_version() + (0,)


def get_num_devices() -> int:
    """The number of CUDA devices."""
    return _nanocuda.Device.count()


def get_process_name(pid: int) -> str:
    """The name of process `pid` (from /proc/PID/comm); NotFoundError if there is none."""
    if isinstance(pid, bool) or not isinstance(pid, int) or pid < 0:
        raise TypeError(f"nanocuda.system.get_process_name: pid must be a non-negative int, got {pid!r}")
    try:
        with open(os.path.join("/proc", str(pid), "comm"), encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        raise _from_code(6, f"nanocuda.system.get_process_name: no process {pid}") from None


def __getattr__(name: str):
    # Read, not computed at import: whether NVML loads here (cuda.core fixes it at import).
    if name == "CUDA_BINDINGS_NVML_IS_COMPATIBLE":
        return _nvml_available()
    # cuda.core 0.x spelled these as attributes of a `system` singleton; keep them working.
    if name == "driver_version":
        return get_user_mode_driver_version()
    if name == "num_devices":
        return get_num_devices()
    if name == "devices":
        return tuple(_nanocuda.Device(i) for i in range(get_num_devices()))
    raise AttributeError(f"module 'nanocuda.system' has no attribute {name!r}")
