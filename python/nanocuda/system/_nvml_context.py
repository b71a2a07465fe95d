"""Whether NVML is loaded: cuda.core.system._nvml_context's functions over the C++ core's state."""

from __future__ import annotations

from .. import _nanocuda

UNINITIALIZED = 0
INITIALIZED = 1
DISABLED_LIBRARY_NOT_FOUND = 2


def _get_nvml_state() -> int:
    """0 before the first NVML call, 1 once NVML is loaded, 2 where loading it failed."""
    return _nanocuda._internal.nvml_state()


def initialize() -> None:
    """Loads libnvidia-ml.so.1 and initializes NVML, once per process."""
    _nanocuda._internal.nvml_initialize()


_initialize = initialize


def is_initialized() -> bool:
    """True once NVML is loaded and initialized."""
    return _get_nvml_state() == INITIALIZED


def validate() -> None:
    """Raises unless NVML is initialized and sees at least one GPU."""
    from .exceptions import _from_code

    state = _get_nvml_state()
    if state == UNINITIALIZED:
        raise _from_code(1, "nanocuda.system: NVML is not initialized (call initialize() first)")
    initialize()  # raises LibraryNotFoundError where the library is missing
    if _nanocuda._internal.nvml_device_count() == 0:
        raise _from_code(28, "nanocuda.system: NVML sees no GPU")
