"""System information in cuda.core's shape (`cuda.core.system`), from the driver alone.

cuda.core answers most of `system` through NVML; nanocuda links no NVML, so it offers what
the CUDA driver and Linux's /proc say: driver versions, the device count, process names.
Importing this module touches neither the driver nor the GPU.
"""

from __future__ import annotations

import os
import re

from . import _nanocuda

__all__ = [
    "CUDA_BINDINGS_NVML_IS_COMPATIBLE",
    "get_driver_version",
    "get_driver_version_full",
    "get_kernel_mode_driver_version",
    "get_num_devices",
    "get_process_name",
    "get_user_mode_driver_version",
]

#: cuda.core sets this when its NVML-based device API is available; nanocuda has none.
CUDA_BINDINGS_NVML_IS_COMPATIBLE = False

_PROC_VERSION = "/proc/driver/nvidia/version"


def get_user_mode_driver_version() -> tuple[int, int]:
    """The CUDA (user-mode) driver version as (major, minor), e.g. (13, 0)."""
    v = _nanocuda.driver_version()
    return (v // 1000, (v % 1000) // 10)


def get_kernel_mode_driver_version() -> tuple[int, ...]:
    """The kernel-mode (GPU) driver version, e.g. (580, 65, 6), read from
    /proc/driver/nvidia/version (Linux); RuntimeError where that file does not exist."""
    try:
        with open(_PROC_VERSION, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise RuntimeError(
            f"nanocuda.system: the kernel-mode driver version is read from {_PROC_VERSION}, "
            f"which cannot be read here ({e.strerror})"
        ) from None
    m = re.search(r"Kernel Module(?: for [^ ]+)?\s+(\d+(?:\.\d+)+)", text) or re.search(
        r"\b(\d{3,}\.\d+(?:\.\d+)?)\b", text
    )
    if not m:
        raise RuntimeError(f"nanocuda.system: no driver version found in {_PROC_VERSION}")
    return tuple(int(p) for p in m.group(1).split("."))


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
    """The name of process `pid` (from /proc/PID/comm); ValueError if there is none."""
    if isinstance(pid, bool) or not isinstance(pid, int) or pid < 0:
        raise TypeError(f"nanocuda.system.get_process_name: pid must be a non-negative int, got {pid!r}")
    try:
        with open(os.path.join("/proc", str(pid), "comm"), encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        raise ValueError(f"nanocuda.system.get_process_name: no process {pid}") from None


def __getattr__(name: str):
    # cuda.core 0.x spelled these as attributes of a `system` singleton; keep them working.
    if name == "driver_version":
        return get_user_mode_driver_version()
    if name == "num_devices":
        return get_num_devices()
    if name == "devices":
        return tuple(_nanocuda.Device(i) for i in range(get_num_devices()))
    raise AttributeError(f"module 'nanocuda.system' has no attribute {name!r}")
