"""Kernel names from a cubin's ELF symbol table, read without the driver (by the C++ core)."""

from __future__ import annotations


def cubin_kernel_names(cubin: bytes) -> list[str]:
    """The kernels (entry functions) in a cubin, read from its ELF symbol table; no driver.

    Kernels are the global or weak function symbols the compiler marks as CUDA entries
    (bit 0x10 of st_other); device functions are not listed. Template kernels appear under
    their mangled names. One reader with `nanocuda build`'s manifest (compile/cubin_info.h).
    """
    from . import _nanocuda

    try:
        return [name for name, _ in _nanocuda._internal.cubin_kernels(bytes(cubin))]
    except ValueError as e:
        raise ValueError(str(e).replace("cubin_kernels:", "cubin_kernel_names:", 1)) from None
