"""Kernel names from a cubin's ELF symbol table, read without the driver."""

from __future__ import annotations

import struct


def cubin_kernel_names(cubin: bytes) -> list[str]:
    """The kernels (entry functions) in a cubin, read from its ELF symbol table; no driver.

    Kernels are the global or weak function symbols the compiler marks as CUDA entries
    (bit 0x10 of st_other); device functions are not listed. Template kernels appear under
    their mangled names.
    """
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("cubin_kernel_names: not a 64-bit ELF cubin")
    try:
        return _entry_names(cubin)
    except (struct.error, IndexError, ValueError) as e:
        raise ValueError(f"cubin_kernel_names: a truncated or corrupt ELF cubin "
                         f"({len(cubin)} bytes): {e}") from None


def _entry_names(cubin: bytes) -> list[str]:
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", cubin, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names = []
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]  # sh_link: its string table
        str_off = strtab[4]
        offset, size, entsize = sh[4], sh[5], sh[9] or 24
        for pos in range(offset, offset + size, entsize):
            st_name, st_info, st_other = struct.unpack_from("<IBB", cubin, pos)
            # FUNC, GLOBAL or WEAK (NVRTC makes template instantiations weak), CUDA entry.
            if st_info & 0xF == 2 and st_info >> 4 in (1, 2) and st_other & 0x10:
                end = cubin.index(b"\0", str_off + st_name)
                names.append(cubin[str_off + st_name:end].decode())
    return sorted(names)
