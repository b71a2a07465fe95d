"""CUDA checkpoint/restore of another process (cuda.core.checkpoint's API; driver CUDA 12.8+).

Example::

    from nanocuda import checkpoint
    p = checkpoint.Process(pid)
    p.lock(timeout_ms=5000); p.checkpoint()   # GPU memory saved, GPU released
    p.restore(); p.unlock()                   # back where it was
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _nanocuda
from ._errors import CudaError, DriverTooOldError

__all__ = ["Process"]

_UNSUPPORTED = ("CUDA checkpointing is not supported by the installed NVIDIA driver. "
                "Upgrade to a driver version with CUDA checkpoint API support.")


def _get_driver() -> Any:
    """The checkpoint calls, once the driver is known to have them (CUDA 12.8+); RuntimeError
    starting with cuda.core's wording otherwise."""
    try:
        _nanocuda._internal.checkpoint.require_support()
    except DriverTooOldError as e:
        raise RuntimeError(f"{_UNSUPPORTED} ({e})") from e
    return _nanocuda._internal.checkpoint


def _binding_version() -> tuple[int, int, int]:
    """The CUDA version nanocuda was built against, as (major, minor, patch)."""
    v = _nanocuda.BUILT_CUDA_VERSION
    return (v // 1000, v % 1000 // 10, 0)


def _call(name: str, *args: Any) -> Any:
    calls = _get_driver()
    try:
        return getattr(calls, name)(*args)
    except CudaError as e:
        if e.name in ("CUDA_ERROR_NOT_SUPPORTED", "CUDA_ERROR_NOT_FOUND"):
            raise RuntimeError(f"{_UNSUPPORTED} ({e})") from e
        raise


def _check_int(value: Any, name: str, positive: bool, call: str) -> int:
    # "pid must be an int" etc. are cuda.core's words (its users match on them), after the call;
    # the upper bounds are the driver's C types (a pid_t pid, an unsigned timeout).
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{call}: {name} must be an int, got {type(value).__name__}")
    if positive and value <= 0:
        raise ValueError(f"{call}: {name} must be a positive int, got {value}")
    if not positive and value < 0:
        raise ValueError(f"{call}: {name} must be >= 0, got {value}")
    limit = 2**31 - 1 if positive else 2**32 - 1
    if value > limit:
        raise ValueError(f"{call}: {name} must be at most {limit}, got {value}")
    return value


class Process:
    """A CUDA process (by pid) that can be locked, checkpointed, restored and unlocked."""

    __slots__ = ("_pid",)

    def __init__(self, pid: int) -> None:
        self._pid = _check_int(pid, "pid", positive=True, call="checkpoint.Process")

    @property
    def pid(self) -> int:
        """The process id."""
        return self._pid

    @property
    def state(self) -> str:
        """'running', 'locked', 'checkpointed' or 'failed'."""
        return _call("state", self._pid)

    @property
    def restore_thread_id(self) -> int:
        """The id of the thread that restores the process's CUDA state."""
        return int(_call("restore_thread_id", self._pid))

    def lock(self, timeout_ms: int = 0) -> None:
        """Blocks further CUDA calls in the process (timeout_ms: 0 waits without limit)."""
        _call("lock", self._pid, _check_int(timeout_ms, "timeout_ms", positive=False, call="Process.lock"))

    def checkpoint(self) -> None:
        """Saves the locked process's GPU memory to host memory and releases its GPUs."""
        _call("checkpoint", self._pid)

    def restore(self, gpu_mapping: Mapping[Any, Any] | None = None) -> None:
        """Restores a checkpointed process (it stays locked). ``gpu_mapping`` maps each
        checkpointed GPU's UUID (Device.uuid text) to the GPU to restore onto, for migration."""
        pairs = []
        if gpu_mapping is not None:
            if not isinstance(gpu_mapping, Mapping):
                raise TypeError("Process.restore: gpu_mapping must be a mapping from checkpointed GPU UUID "
                                "to restore GPU UUID")
            for old, new in gpu_mapping.items():
                if not isinstance(old, str) or not isinstance(new, str):
                    raise TypeError("Process.restore: GPU UUID values must be UUID strings (Device.uuid), got "
                                    f"{type(old).__name__} -> {type(new).__name__}")
                pairs.append((old, new))
        _call("restore", self._pid, pairs)

    def unlock(self) -> None:
        """Lets the locked process make CUDA calls again."""
        _call("unlock", self._pid)

    def __repr__(self) -> str:
        return f"<nanocuda.checkpoint.Process pid={self._pid}>"
