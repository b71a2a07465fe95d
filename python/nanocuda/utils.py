"""cuda.core.utils in nanocuda: StridedMemoryView, args_viewable_as_strided_memory, the program
caches and make_program_cache_key."""

from __future__ import annotations

from ._program_cache import FileStreamProgramCache, InMemoryProgramCache, ProgramCacheResource
from ._program_cache_key import make_program_cache_key
from ._strided_memory_view import StridedMemoryView, args_viewable_as_strided_memory

__all__ = [
    "FileStreamProgramCache",
    "InMemoryProgramCache",
    "ProgramCacheResource",
    "StridedMemoryView",
    "args_viewable_as_strided_memory",
    "make_program_cache_key",
]
