"""cuda.core.utils in nanocuda: StridedMemoryView and args_viewable_as_strided_memory."""

from ._strided_memory_view import StridedMemoryView, args_viewable_as_strided_memory

__all__ = ["StridedMemoryView", "args_viewable_as_strided_memory"]
