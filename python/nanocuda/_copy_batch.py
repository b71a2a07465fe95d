"""utils.copy_batch and its options (CopyOptions, MemcpySrcAccessOrder, MemcpyOverlapMode), as cuda.core names them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Optional, Union

from ._host import Host
from ._managed_buffer import _location
from ._nanocuda import Buffer, Device, GraphBuilder, _internal
from ._str_enum import _StrEnum

__all__ = ["CopyOptions", "MemcpyOverlapMode", "MemcpySrcAccessOrder", "copy_batch"]


class MemcpySrcAccessOrder(_StrEnum):
    """How a batched copy may read its source (CUmemcpySrcAccessOrder).

    STREAM: in stream order (the source may still be written by earlier work on the stream).
    DURING_API_CALL: out of stream order, but every read is done when copy_batch returns.
    ANY: out of stream order, possibly after copy_batch returns; keep the source unchanged
    until the copy completes in stream order."""

    STREAM = "stream"
    DURING_API_CALL = "during_api_call"
    ANY = "any"


class MemcpyOverlapMode(_StrEnum):
    """Whether a batched copy asks to overlap with compute work (a hint; CUmemcpyFlags)."""

    DEFAULT = "default"
    PREFER_OVERLAP_WITH_COMPUTE = "prefer_overlap_with_compute"


@dataclasses.dataclass(frozen=True)
class CopyOptions:
    """Options of one copy in copy_batch: the source access order, and hints for where the
    source and destination live (a Device or a Host; used by the driver for managed memory
    only) and for overlapping with compute."""

    src_access_order: Union[MemcpySrcAccessOrder, str] = MemcpySrcAccessOrder.STREAM
    src_location_hint: Optional[Union[Device, Host]] = None
    dst_location_hint: Optional[Union[Device, Host]] = None
    overlap_mode: Union[MemcpyOverlapMode, str] = MemcpyOverlapMode.DEFAULT

    def __post_init__(self) -> None:
        call = "CopyOptions"
        for field, kind in (("src_access_order", MemcpySrcAccessOrder), ("overlap_mode", MemcpyOverlapMode)):
            value = getattr(self, field)
            try:
                object.__setattr__(self, field, kind(value))
            except ValueError:
                names = ", ".join(repr(m.value) for m in kind)
                raise ValueError(f"{call}: {field} must be one of {names}, got {value!r}") from None
        for field in ("src_location_hint", "dst_location_hint"):
            _location(f"{call}.{field}", getattr(self, field), allow_none=True)  # TypeError for a non-location

    def _as_tuple(self) -> tuple:
        return (self.src_access_order.value, _location("copy_batch", self.src_location_hint, allow_none=True),
                _location("copy_batch", self.dst_location_hint, allow_none=True),
                self.overlap_mode is MemcpyOverlapMode.PREFER_OVERLAP_WITH_COMPUTE)


def _buffer_list(call: str, name: str, value: object) -> list:
    if isinstance(value, Buffer) or not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise TypeError(f"{call}: {name} must be a sequence of Buffers, got {type(value).__name__} "
                        "(for one buffer use Buffer.copy_to or Buffer.copy_from)")
    return list(value)


def copy_batch(stream, srcs, dsts, *, options=None) -> None:
    """Copy each Buffer of `srcs` to the Buffer of `dsts` at the same index, all in one batch on
    `stream` (cuMemcpyBatchAsync). Each pair's sizes must match and no two copies may overlap.
    `options` is one CopyOptions for every copy, one per copy, or None (stream-ordered). A
    GraphBuilder or a capturing stream is refused (a batched copy has no graph node); on the
    legacy default stream, or a driver older than CUDA 13, the copies are queued one by one."""
    call = "copy_batch"
    if isinstance(stream, GraphBuilder):
        raise TypeError(f"{call}: stream cannot be a GraphBuilder (a batched copy has no graph node); "
                        "capture Buffer.copy_to per buffer instead")
    src_list = _buffer_list(call, "srcs", srcs)
    dst_list = _buffer_list(call, "dsts", dsts)
    if len(src_list) != len(dst_list):
        raise ValueError(f"{call}: {len(src_list)} sources for {len(dst_list)} destinations; the lengths must match")
    if options is None:
        opts = [CopyOptions()]
    elif isinstance(options, CopyOptions):
        opts = [options]
    elif isinstance(options, Sequence) and not isinstance(options, (str, bytes)):
        opts = list(options)
        if len(opts) != len(src_list):
            raise ValueError(f"{call}: {len(opts)} options for {len(src_list)} copies; the length must match")
        for o in opts:
            if not isinstance(o, CopyOptions):
                raise TypeError(f"{call}: options must hold CopyOptions, got {type(o).__name__}")
    else:
        raise TypeError(f"{call}: options must be a CopyOptions, a sequence of them or None, "
                        f"got {type(options).__name__}")
    _internal.copy_batch(stream, src_list, dst_list, [o._as_tuple() for o in opts], call)
