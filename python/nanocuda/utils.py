"""cuda.core.utils in nanocuda: StridedMemoryView, args_viewable_as_strided_memory,
make_program_cache_key and the batched managed-memory operations."""

from __future__ import annotations

import hashlib
from typing import Optional, Sequence, Union

from ._managed_buffer import discard_batch, discard_prefetch_batch, prefetch_batch
from ._strided_memory_view import StridedMemoryView, args_viewable_as_strided_memory

__all__ = ["StridedMemoryView", "args_viewable_as_strided_memory", "discard_batch", "discard_prefetch_batch",
           "make_program_cache_key", "prefetch_batch"]


def make_program_cache_key(*, code: Union[str, bytes], code_type: str, options: object, target_type: str,
                           name_expressions: Sequence[Union[str, bytes]] = (),
                           extra_digest: Optional[bytes] = None) -> bytes:
    """A 32-byte key for what Program(code, code_type, options).compile(target_type,
    name_expressions) produces: the SHA-256 of nanocuda's own compile-cache key (NVRTC build,
    every flag, the source and the local headers it includes, by content) and `extra_digest`.
    C++ sources only: nanocuda does not cache PTX or NVVM compiles (ValueError)."""
    from ._nanocuda import Program

    if isinstance(code, bytes):
        code = code.decode("utf-8")
    if extra_digest is not None and not isinstance(extra_digest, bytes):
        raise TypeError(f"make_program_cache_key: extra_digest must be bytes or None, got {type(extra_digest).__name__}")
    if isinstance(name_expressions, (str, bytes)):
        name_expressions = (name_expressions,)
    names = []
    for n in name_expressions:
        if not isinstance(n, (str, bytes)):
            raise TypeError(f"make_program_cache_key: name_expressions must hold str or bytes, got {type(n).__name__}")
        # "f" and b"f" are different keys, as in cuda.core (symbol_mapping keeps the type).
        names.append(("s" if isinstance(n, str) else "b", n if isinstance(n, str) else n.decode("utf-8")))
    names.sort()
    try:
        key = Program(code, code_type, options=options).cache_key(target_type, [n for _, n in names])
    except (ValueError, TypeError) as e:
        if type(e) not in (ValueError, TypeError) or str(e).startswith("make_program_cache_key"):
            raise
        raise type(e)(f"make_program_cache_key: {e}") from e
    h = hashlib.sha256(key)
    h.update("".join(kind for kind, _ in names).encode())
    if extra_digest is not None:
        h.update(b"\0extra\0" + extra_digest)
    return h.digest()
