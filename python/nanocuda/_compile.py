"""Runtime compilation helpers: the pip-wheel NVRTC search and ``nanocuda.compile``."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping

from . import _nanocuda
from ._nanocuda import ObjectCode, Program, ProgramOptions, add_library_search_dirs

# Where NVIDIA's pip wheels put the libraries, relative to a site-packages folder:
# CUDA 13's shared nvidia/cu13 first, then CUDA 12's per-component folders.
_WHEEL_LIB_DIRS = ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib", "nvidia/nvjitlink/lib")
# And the headers: cuda.h/cuda_fp16.h (nvidia-cuda-runtime) and cccl/cuda/std
# (nvidia-cuda-cccl) share nvidia/cu13/include; CUDA 12 kept them apart (crt/ in cuda_nvcc).
# Both majors may be installed: the C++ core uses only those of the NVRTC's major.
_WHEEL_INCLUDE_DIRS = ("nvidia/cu13/include", "nvidia/cuda_runtime/include", "nvidia/cuda_cccl/include",
                       "nvidia/cuda_nvcc/include")

# The pip package that provides each piece (named in `nanocuda info` and in errors).
PIP_PACKAGES = {
    "NVRTC": "nvidia-cuda-nvrtc",
    "nvJitLink": "nvidia-nvjitlink",
    "cuda.h": "nvidia-cuda-runtime",
    "cuda/std": "nvidia-cuda-cccl",
}


def _wheel_dirs(subdirs: tuple[str, ...]) -> list[str]:
    found = []
    for entry in sys.path:
        for sub in subdirs:
            d = os.path.join(entry or ".", sub)
            if os.path.isdir(d) and d not in found:
                found.append(d)
    return found


def wheel_library_dirs() -> list[str]:
    """The NVIDIA wheel library folders present on sys.path, in sys.path order."""
    return _wheel_dirs(_WHEEL_LIB_DIRS)


def wheel_include_dirs() -> list[str]:
    """The NVIDIA wheel include folders present on sys.path, in sys.path order."""
    return _wheel_dirs(_WHEEL_INCLUDE_DIRS)


def register_wheel_dirs() -> None:
    """Adds the wheel folders to the C++ search lists (stat calls only: no library loads)."""
    if dirs := wheel_library_dirs():
        add_library_search_dirs(dirs)
    if dirs := wheel_include_dirs():
        _nanocuda._internal.add_include_search_dirs(dirs)


def _pip_owner(path: str) -> str | None:
    """'nvidia-cuda-nvrtc 13.0.88' when an installed distribution owns `path`, else None."""
    import importlib.metadata

    real = os.path.realpath(path)
    if f"{os.sep}nvidia{os.sep}" not in real:
        return None
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"] or ""
        if not name.lower().startswith("nvidia") and name.lower() != "cuda-toolkit":
            continue
        for f in dist.files or ():
            if os.path.realpath(dist.locate_file(f)) == real:
                return f"{name} {dist.version}"
    return None


def _origin(path: str, env_var: str | None = None) -> str:
    if env_var and os.environ.get(env_var) == path:
        return f"${env_var}"
    if owner := _pip_owner(path):
        return f"pip package {owner}"
    real = os.path.realpath(path)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and real.startswith(os.path.realpath(root) + os.sep):
            return f"CUDA toolkit (${var})"
    if f"{os.sep}nvidia{os.sep}" in real:
        return "an NVIDIA pip package outside this Python's sys.path"
    if real.startswith(os.path.realpath("/usr/local/cuda") + os.sep) or "/cuda" in real:
        return "CUDA toolkit"
    return "the dynamic loader's search"


def toolkit_sources() -> list[tuple[str, str, str]]:
    """(piece, path, where it came from) for NVRTC, nvJitLink, cuda.h and cuda/std.

    Loads NVRTC and nvJitLink (no GPU needed). A piece that is missing has an empty path and,
    as its origin, the error or what to install.

    Example::

        >>> for piece, path, origin in nanocuda._compile.toolkit_sources():
        ...     print(piece, path, origin)   # doctest: +SKIP
        NVRTC /usr/local/cuda-13.0/lib64/libnvrtc.so.13 CUDA toolkit
    """
    from ._errors import NanocudaError

    rows: list[tuple[str, str, str]] = []
    for piece, env_var, load in (
        ("NVRTC", "NANOCUDA_NVRTC", _nanocuda.nvrtc_library),
        ("nvJitLink", "NANOCUDA_NVJITLINK", _nanocuda._internal.nvjitlink_library),
    ):
        try:
            path = load()
            rows.append((piece, path, _origin(path, env_var)))
        except NanocudaError as e:
            rows.append((piece, "", str(e).splitlines()[0]))
    try:
        include, cccl = _nanocuda._internal.cuda_include_dirs()
    except NanocudaError:
        return rows  # NVRTC is missing: its row already says what to install
    # A folder's origin is that of the file that made it the choice (several pip packages
    # share nvidia/cu13/include).
    for piece, path, marker in (("cuda.h", include, "cuda.h"), ("cuda/std", cccl, "cuda/std/cstdint")):
        if path:
            rows.append((piece, path, _origin(os.path.join(path, marker))))
        else:
            cu12 = "-cu12" if _nanocuda.nvrtc_version() // 1000 == 12 else ""
            rows.append((piece, "", f"not found: pip install {PIP_PACKAGES[piece]}{cu12}"))
    return rows


def compile(  # noqa: A001 - mirrors the verb users expect
    source: str,
    *,
    target: str = "cubin",
    name_expressions: Iterable[str] = (),
    name: str = "kernel.cu",
    defines: Mapping[str, object] | Iterable[str] | None = None,
    include_dirs: str | os.PathLike | Iterable[str | os.PathLike] = (),
    **options,
) -> ObjectCode:
    """Compile CUDA C++ ``source`` and return its ObjectCode (cached).

    ``options`` are ProgramOptions fields: arch, std, fast_math, lineinfo, debug,
    max_registers, relocatable_device_code, default_device, extra_flags. ``arch`` defaults to
    the current device's; with no GPU (CI, build servers) pass it, e.g. ``arch="sm_90a"``. ``defines`` may be
    a dict ({"N": 128, "FAST": None}), a list of "NAME[=VALUE]" strings or one such string;
    ``include_dirs`` one folder or a list of them. NVRTC and the
    CUDA headers come from the toolkit or, with no toolkit, from ``pip install
    "nanocuda[nvrtc]"``; ``nanocuda info`` says which.

    Example::

        src = 'extern "C" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }'
        code = nanocuda.compile(src, arch="90a", defines={"N": 128})
        kernel = code.get_kernel("scale")
    """
    if not isinstance(source, str):  # Program takes bytes too; compile() documents a str
        raise TypeError(f"compile: source must be a str of CUDA C++, got {type(source).__name__}")
    # ProgramOptions converts and checks defines (dict, list or one str) and include_dirs
    # (one folder or a list), so every entry point shares one rule.
    opts = ProgramOptions(defines=defines, include_dirs=include_dirs, **options)
    return Program(source, opts, name=name).compile(target, name_expressions=name_expressions)
