"""Host: the CPU (or one of its NUMA nodes) as a memory location, beside Device (cuda.core)."""

from __future__ import annotations

import threading
from typing import Optional

__all__ = ["Host"]

_lock = threading.Lock()
_instances: dict = {}


class Host:
    """The host as a memory location: ``Host()`` (anywhere the OS puts it),
    ``Host(numa_id=N)`` (NUMA node N) or ``Host.numa_current()`` (the calling thread's node).
    One immutable instance per location, so ``Host(numa_id=1) is Host(numa_id=1)``."""

    __slots__ = ("_numa_id", "_is_numa_current")

    def __new__(cls, numa_id: Optional[int] = None, *, is_numa_current: bool = False) -> "Host":
        if numa_id is not None and (isinstance(numa_id, bool) or not isinstance(numa_id, int) or numa_id < 0):
            raise ValueError(f"Host: numa_id must be a non-negative int or None, got {numa_id!r}")
        if not isinstance(is_numa_current, bool):
            raise TypeError(f"Host: is_numa_current must be a bool, got {type(is_numa_current).__name__}")
        if is_numa_current and numa_id is not None:
            raise ValueError("Host: numa_id and is_numa_current=True are mutually exclusive")
        key = (numa_id, is_numa_current)
        with _lock:
            inst = _instances.get(key)
            if inst is None:
                inst = object.__new__(cls)
                object.__setattr__(inst, "_numa_id", numa_id)
                object.__setattr__(inst, "_is_numa_current", is_numa_current)
                _instances[key] = inst
        return inst

    @classmethod
    def numa_current(cls) -> "Host":
        """The NUMA node of the calling thread, resolved where the memory is used."""
        return cls(is_numa_current=True)

    @property
    def numa_id(self) -> Optional[int]:
        """The NUMA node, or None (any node, or the calling thread's)."""
        return self._numa_id

    @property
    def is_numa_current(self) -> bool:
        """True for Host.numa_current()."""
        return self._is_numa_current

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Host is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Host is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Host):
            return NotImplemented
        return (self._numa_id, self._is_numa_current) == (other._numa_id, other._is_numa_current)

    def __hash__(self) -> int:
        return hash((Host, self._numa_id, self._is_numa_current))

    def __repr__(self) -> str:
        if self._is_numa_current:
            return "Host.numa_current()"
        return "Host()" if self._numa_id is None else f"Host(numa_id={self._numa_id})"

    def __reduce__(self):
        if self._is_numa_current:
            return (_numa_current, ())
        return (Host, (self._numa_id,))

    def __copy__(self) -> "Host":
        return self

    def __deepcopy__(self, memo: dict) -> "Host":
        return self


def _numa_current() -> Host:
    return Host.numa_current()
