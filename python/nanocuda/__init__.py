"""nanocuda: the CUDA driver, NVRTC, launches and TMA descriptors from Python at C++ speed.

Importing nanocuda never touches the GPU: the driver is loaded on the first call that
needs it, and a machine without one gets DriverNotFoundError then, not at import.
"""

from ._errors import CudaError, DriverNotFoundError, NanocudaError
from ._nanocuda import (
    BUILT_CUDA_VERSION,
    DEVICE_ATTRIBUTES,
    Buffer,
    Device,
    Event,
    PinnedBuffer,
    Stream,
    TensorMap,
    __version__,
    copy,
    driver_library,
    driver_version,
    memset,
    result_description,
    result_name,
    take_deferred_errors,
)

__all__ = [
    "BUILT_CUDA_VERSION",
    "DEVICE_ATTRIBUTES",
    "Buffer",
    "CudaError",
    "Device",
    "DriverNotFoundError",
    "Event",
    "NanocudaError",
    "PinnedBuffer",
    "Stream",
    "TensorMap",
    "__version__",
    "copy",
    "driver_library",
    "driver_version",
    "memset",
    "result_description",
    "result_name",
    "take_deferred_errors",
]


def _warn_unreported() -> None:
    # Errors raised in destructors are reported by the next checked call; any left at exit
    # are shown as warnings so they are never silently lost.
    import warnings

    for message in take_deferred_errors():
        warnings.warn(f"nanocuda: unreported error from a destructor: {message}", RuntimeWarning)


import atexit as _atexit

_atexit.register(_warn_unreported)
