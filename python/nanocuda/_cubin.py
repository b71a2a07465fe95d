"""Kernel names from a cubin's ELF symbol table, read without the driver (by the C++ core)."""

from __future__ import annotations


def cubin_kernel_names(cubin: bytes) -> list[str]:
    """The kernels (entry functions) in a cubin, read from its ELF symbol table; no driver.

    Kernels are the global or weak function symbols the compiler marks as CUDA entries
    (bit 0x10 of st_other); device functions are not listed. Template kernels appear under
    their mangled names. The same C++ reader (compile/cubin_info.h) serves ``ObjectCode.kernel_names`` and
    ``nanocuda build``'s manifest.
    """
    from ._nanocuda import _internal

    if not isinstance(cubin, (bytes, bytearray, memoryview)):  # bytes(5) would be five zeros
        raise TypeError(f"cubin_kernel_names: cubin must be bytes, got {type(cubin).__name__}")
    return _internal.cubin_kernel_names(bytes(cubin))
