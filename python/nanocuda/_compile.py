"""Runtime compilation helpers: the pip-wheel NVRTC search and ``nanocuda.compile``."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping

from ._nanocuda import ObjectCode, Program, ProgramOptions, add_library_search_dirs

# Where NVIDIA's pip wheels put the libraries, relative to a site-packages folder:
# the CUDA 13 meta wheel first, then the per-component wheels.
_WHEEL_LIB_DIRS = ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib", "nvidia/nvjitlink/lib")


def wheel_library_dirs() -> list[str]:
    """The NVIDIA wheel library folders present on sys.path, in sys.path order."""
    found = []
    for entry in sys.path:
        for sub in _WHEEL_LIB_DIRS:
            d = os.path.join(entry or ".", sub)
            if os.path.isdir(d) and d not in found:
                found.append(d)
    return found


def register_wheel_dirs() -> None:
    """Adds the wheel folders to the C++ search list (stat calls only: no library loads)."""
    dirs = wheel_library_dirs()
    if dirs:
        add_library_search_dirs(dirs)


def _defines(defines: Mapping[str, object] | Iterable[str] | None) -> list[str]:
    if defines is None:
        return []
    if isinstance(defines, Mapping):
        return [k if v is None else f"{k}={v}" for k, v in defines.items()]
    return [str(d) for d in defines]


def compile(  # noqa: A001 - mirrors the verb users expect
    source: str,
    *,
    target: str = "cubin",
    name_expressions: Iterable[str] = (),
    name: str = "kernel.cu",
    defines: Mapping[str, object] | Iterable[str] | None = None,
    include_dirs: Iterable[str | os.PathLike] = (),
    **options,
) -> ObjectCode:
    """Compile CUDA C++ ``source`` and return its ObjectCode (cached).

    ``options`` are ProgramOptions fields: arch, std, fast_math, lineinfo, debug,
    max_registers, relocatable_device_code, default_device, extra_flags. ``defines`` may be
    a dict ({"N": 128, "FAST": None}) or a list of "NAME[=VALUE]" strings.
    """
    opts = ProgramOptions(
        defines=_defines(defines), include_dirs=[os.fspath(d) for d in include_dirs], **options
    )
    return Program(source, opts, name=name).compile(target, name_expressions=list(name_expressions))
