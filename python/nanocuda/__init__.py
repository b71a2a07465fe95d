"""nanocuda: the CUDA driver, NVRTC, launches and TMA descriptors from Python at C++ speed.

Importing nanocuda never touches the GPU: the driver is loaded on the first call that
needs it, and a machine without one gets DriverNotFoundError then, not at import.
help(nanocuda), pydoc, dir() and inspect.getmembers() need no driver: without one, the
default streams (LEGACY_DEFAULT_STREAM, PER_THREAD_DEFAULT_STREAM) are simply not shown.
"""

from ._errors import (
    CompileError,
    CudaError,
    DriverNotFoundError,
    DriverTooOldError,
    NanocudaError,
    ToolkitNotFoundError,
)
from ._nanocuda import (
    BUILT_CUDA_VERSION,
    DEVICE_ATTRIBUTES,
    Buffer,
    ComputeCapability,
    Context,
    Device,
    DeviceProperties,
    DeviceResources,
    SMResource,
    DeviceMemoryResource,
    IPCAllocationHandle,
    IPCBufferDescriptor,
    ManagedMemoryResource,
    MemoryPoolAttributes,
    MemoryResource,
    PinnedMemoryResource,
    VirtualMemoryResource,
    Event,
    Graph,
    GraphBuilder,
    GraphCompleteOptions,
    GraphDebugPrintOptions,
    GraphMemoryResource,
    ConditionalHandle,
    LaunchConfig,
    Launcher,
    Linker,
    LinkerOptions,
    Kernel,
    KernelAttributes,
    KernelOccupancy,
    ObjectCode,
    PinnedBuffer,
    Program,
    ProgramOptions,
    Stream,
    TensorMap,
    __version__,
    clear_memory_cache,
    compile_cache_dir,
    compile_cache_info,
    compile_cache_enabled,
    copy,
    launch,
    driver_library,
    driver_version,
    link,
    memset,
    nvrtc_library,
    nvrtc_version,
    result_description,
    result_name,
    take_deferred_errors,
)
from ._compile import compile, register_wheel_dirs as _register_wheel_dirs
from .workflow import CudaModule, include_dir, load, load_dir
from ._aot import PrebuiltError
from ._memory_options import (
    DeviceMemoryResourceOptions,
    ManagedMemoryResourceOptions,
    PinnedMemoryResourceOptions,
    VirtualMemoryResourceOptions,
)
from ._cuda_core import EventOptions, LegacyPinnedMemoryResource, StreamOptions, TensorMapDescriptorOptions
from ._host import Host
from ._green_context import ContextOptions, SMResourceOptions, WorkqueueResource, WorkqueueResourceOptions
from ._managed_buffer import ManagedBuffer
from . import _memory_resource  # noqa: F401  (Python MemoryResource subclasses need no super().__init__())
from ._strided_memory_view import StridedMemoryView, args_viewable_as_strided_memory
from . import graph, system, utils
from .graph import GraphCompleteOptions  # cuda.core's: checks upload_stream on use (graph/__init__.py)
from ._host_launch import host_launch
from . import _ipc

_ipc.register()  # Buffers of IPC-enabled pools and IPC events pickle through multiprocessing

_register_wheel_dirs()


def _register_device_headers() -> None:
    # The installed copy of include/nanocuda/device (a stat, no GPU): kernels compiled by
    # nanocuda can `#include <nanocuda/device/tma.cuh>` with no include path of their own.
    import os

    include = os.path.join(os.path.dirname(__file__), "include")
    if os.path.isdir(os.path.join(include, "nanocuda", "device")):
        _nanocuda._internal.set_device_include_dir(include)


from . import _nanocuda  # noqa: E402

_register_device_headers()


def _register_torch_bridge_autoload() -> None:
    # Lets a torch bridge built earlier (nanocuda.torch_bridge.enable) install itself the
    # first time a torch tensor is read; imports nothing now.
    from . import torch_bridge

    _nanocuda._internal.set_first_sight_hook(torch_bridge._autoload)


_register_torch_bridge_autoload()

__all__ = [
    "BUILT_CUDA_VERSION",
    "DEVICE_ATTRIBUTES",
    "Buffer",
    "CompileError",
    "CudaModule",
    "CudaError",
    "Device",
    "DriverNotFoundError",
    "DriverTooOldError",
    "Event",
    "Graph",
    "GraphBuilder",
    "GraphCompleteOptions",
    "GraphDebugPrintOptions",
    "GraphMemoryResource",
    "ConditionalHandle",
    "LaunchConfig",
    "Launcher",
    "Linker",
    "LinkerOptions",
    "Kernel",
    "KernelAttributes",
    "KernelOccupancy",
    "NanocudaError",
    "ObjectCode",
    "PinnedBuffer",
    "PrebuiltError",
    "Program",
    "ProgramOptions",
    "Stream",
    "TensorMap",
    "ToolkitNotFoundError",
    "__version__",
    "clear_memory_cache",
    "compile",
    "compile_cache_dir",
    "compile_cache_info",
    "compile_cache_enabled",
    "copy",
    "launch",
    "host_launch",
    "driver_library",
    "driver_version",
    "include_dir",
    "link",
    "load",
    "load_dir",
    "memset",
    "nvrtc_library",
    "nvrtc_version",
    "result_description",
    "result_name",
    "take_deferred_errors",
    # memory resources, IPC, several GPUs (docs/DESIGN.md "Decisions: memory")
    "DeviceMemoryResource",
    "DeviceMemoryResourceOptions",
    "Host",
    "IPCAllocationHandle",
    "IPCBufferDescriptor",
    "ManagedBuffer",
    "ManagedMemoryResource",
    "ManagedMemoryResourceOptions",
    "MemoryPoolAttributes",
    "MemoryResource",
    "LegacyPinnedMemoryResource",
    "PinnedMemoryResource",
    "PinnedMemoryResourceOptions",
    "VirtualMemoryResource",
    "VirtualMemoryResourceOptions",
    # cuda.core's runtime names (docs/DESIGN.md "Decisions: the cuda.core surface")
    "ComputeCapability",
    "Context",
    "ContextOptions",
    "DeviceResources",
    "SMResource",
    "SMResourceOptions",
    "WorkqueueResource",
    "WorkqueueResourceOptions",
    "DeviceProperties",
    "EventOptions",
    "StreamOptions",
    "StridedMemoryView",
    "TensorMapDescriptor",
    "TensorMapDescriptorOptions",
    "args_viewable_as_strided_memory",
    "checkpoint",
    "graph",
    "system",
    "texture",
    "utils",
]

# cuda.core's name for a tiled TMA descriptor (what StridedMemoryView.as_tensor_map returns).
TensorMapDescriptor = TensorMap


def _warn_unreported() -> None:
    # Errors raised in destructors are reported by the next checked call; any left at exit
    # are shown as warnings so they are never silently lost.
    import warnings

    for message in take_deferred_errors():
        warnings.warn(f"nanocuda: unreported error from a destructor: {message}", RuntimeWarning)


# cuda.core's module-level default streams. Read lazily (a Stream needs the driver, and
# `import nanocuda` never touches the GPU), each time for the current device.
_DEFAULT_STREAMS = {"LEGACY_DEFAULT_STREAM": "legacy", "PER_THREAD_DEFAULT_STREAM": "per_thread"}


class _NoDriverAttributeError(DriverNotFoundError, AttributeError):
    """A default stream read with no driver: a DriverNotFoundError that is also an
    AttributeError, so help(), pydoc, hasattr() and inspect.getmembers() pass over it."""


# cuda.core's submodules that import nanocuda.typing, imported on first use (`import nanocuda`
# stays light): nanocuda.texture, nanocuda.checkpoint.
_LAZY_SUBMODULES = ("checkpoint", "texture")


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    kind = _DEFAULT_STREAMS.get(name)
    if kind is None:
        raise AttributeError(f"module 'nanocuda' has no attribute {name!r}")
    try:
        return getattr(Stream, kind)(Device())
    except DriverNotFoundError as e:
        raise _NoDriverAttributeError(f"nanocuda.{name} needs an NVIDIA driver: {e}") from None


def __dir__() -> list:
    return sorted(set(globals()) | set(_DEFAULT_STREAMS) | set(_LAZY_SUBMODULES))


import atexit as _atexit

_atexit.register(_warn_unreported)
