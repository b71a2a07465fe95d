# The argument protocols the converters accept (python/ext/interop/interop.cpp to_stream and
# device_pointer, python/ext/core bind_device.cpp device_ordinal_arg): typing-only names,
# not in the module at run time.
import os
import uuid
from typing import Any, Literal, Protocol, TypeAlias
from nanocuda import texture as _texture  # Device.create_opaque_array and friends return its types
from nanocuda import _cuda_core, _green_context  # options of Device.create_context, SMResource.split, Context.create_stream

class SupportsCudaStream(Protocol):
    """An object with ``__cuda_stream__() -> (0, handle)`` (CuPy, cuda.core streams)."""
    def __cuda_stream__(self) -> tuple[int, int]: ...

class HasCudaStreamHandle(Protocol):
    """An object with a ``cuda_stream`` int handle (torch.cuda.Stream)."""
    @property
    def cuda_stream(self) -> int: ...

StreamLike: TypeAlias = Stream | SupportsCudaStream | HasCudaStreamHandle
"""A nanocuda Stream, or a foreign stream adopted by protocol; a bare int is refused (Stream.from_handle adopts one)."""

DeviceLike: TypeAlias = Device | int | str
"""A Device, an ordinal, or torch's "cuda" / "cuda:N"."""

class SupportsCudaArrayInterface(Protocol):
    """An object with ``__cuda_array_interface__`` (CuPy, Numba, ...)."""
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...

class SupportsDLPack(Protocol):
    """An object with ``__dlpack__`` and ``__dlpack_device__`` (torch, JAX, CuPy, ...)."""
    def __dlpack__(self, *, stream: int | None = ...) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...

class HasDataPtr(Protocol):
    """An object with ``data_ptr() -> int`` (torch tensors)."""
    def data_ptr(self) -> int: ...

DeviceArray: TypeAlias = SupportsCudaArrayInterface | SupportsDLPack | HasDataPtr
"""Device memory of another library, read by protocol (host memory is a ValueError)."""

DevicePointer: TypeAlias = Buffer | DeviceArray | int
"""A Buffer, another library's device array, or a raw device address (int)."""


CodeTarget: TypeAlias = Literal["cubin", "ptx", "ltoir"]
"""What Program.compile produces."""

class SupportsWrite(Protocol):
    """A file-like object with ``write(str)`` (io.StringIO, sys.stderr, ...)."""
    def write(self, s: str, /) -> object: ...

# Program.compile(cache=) takes the Python-level cache ABC (python/nanocuda/_program_cache.py).
from nanocuda._program_cache import ProgramCacheResource
