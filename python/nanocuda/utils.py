"""cuda.core.utils in nanocuda: StridedMemoryView, args_viewable_as_strided_memory, the program
caches, make_program_cache_key, the batched managed-memory operations and copy_batch."""

from __future__ import annotations

from ._copy_batch import CopyOptions, MemcpyOverlapMode, MemcpySrcAccessOrder, copy_batch
from ._managed_buffer import discard_batch, discard_prefetch_batch, prefetch_batch
from ._program_cache import FileStreamProgramCache, InMemoryProgramCache, ProgramCacheResource
from ._program_cache_key import make_program_cache_key
from ._strided_memory_view import StridedMemoryView, args_viewable_as_strided_memory

__all__ = [
    "CopyOptions",
    "FileStreamProgramCache",
    "InMemoryProgramCache",
    "MemcpyOverlapMode",
    "MemcpySrcAccessOrder",
    "ProgramCacheResource",
    "StridedMemoryView",
    "args_viewable_as_strided_memory",
    "copy_batch",
    "discard_batch",
    "discard_prefetch_batch",
    "make_program_cache_key",
    "prefetch_batch",
]
