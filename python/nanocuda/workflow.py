"""The kernel workflow: drop a .cu file in a folder, call its kernels from Python.

    mod = nanocuda.load("kernels/square.cu")          # compiled with NVRTC, cached on disk
    mod.square(x, out, n, grid=64, block=256)          # launch on the default stream
    mod.square[64, 256](x, out, n)                     # same, with the config bound (faster)

There is no build step: the file is compiled on first use, the compile cache (keyed on the
source, its local headers and the flags) makes later runs instant, and an edited file (or
an edited local header) is recompiled on the next attribute access. The default stream is
torch's current stream when torch is imported, else the legacy stream of device 0.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Iterable

__all__ = ["CudaModule", "KernelFunction", "cubin_kernel_names", "default_stream", "example_path",
           "include_dir", "load", "load_dir"]


def include_dir() -> str:
    """The folder holding `nanocuda/device/*.cuh` (installed with the package, or the repo's)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "include"),
                      os.path.join(here, os.pardir, os.pardir, "include")):
        if os.path.isfile(os.path.join(candidate, "nanocuda", "device", "tma.cuh")):
            return os.path.normpath(candidate)
    return os.path.join(here, "include")


def example_path(name: str) -> str:
    """An example kernel file ("hopper_gemm.cu"): installed with the package, or the checkout's."""
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (os.path.join(here, "examples"),
                   os.path.join(here, os.pardir, os.pardir, "examples", "kernels")):
        path = os.path.normpath(os.path.join(folder, name))
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"example kernel {name} not found (reinstall nanocuda)")


def cubin_kernel_names(cubin: bytes) -> list[str]:
    """The kernels (entry functions) in a cubin, read from its ELF symbol table; no driver.

    Kernels are the global or weak function symbols the compiler marks as CUDA entries
    (bit 0x10 of st_other); device functions are not listed. Template kernels appear under
    their mangled names.
    """
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("cubin_kernel_names: not a 64-bit ELF cubin")
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


_streams: dict[tuple, object] = {}
_torch_cuda: list[bool] = []


def _torch_has_cuda(torch) -> bool:
    # Asked once: is_available() costs microseconds and this runs on every launch.
    if not _torch_cuda:
        _torch_cuda.append(bool(torch.cuda.is_available()))
    return _torch_cuda[0]


def default_stream():
    """torch's current stream when torch is imported, else the legacy stream of device 0."""
    import nanocuda

    torch = sys.modules.get("torch")
    if torch is not None and _torch_has_cuda(torch):
        handle = torch.cuda.current_stream().cuda_stream
        device = torch.cuda.current_device()
        key = (handle, device)
    else:
        handle, device, key = 0, 0, (0, 0)
    stream = _streams.get(key)
    if stream is None:
        stream = (nanocuda.Stream.from_handle(handle, device) if handle
                  else nanocuda.Stream.legacy(nanocuda.Device(device)))
        _streams[key] = stream
    return stream


def _config(grid, block, shared_mem=0):
    import nanocuda

    return nanocuda.LaunchConfig(grid=grid, block=block, shared_mem=shared_mem)


class KernelFunction:
    """One kernel of a CudaModule: call it with `grid=`/`block=`, or index it with a config.

    `f(*args, grid=, block=, shared_mem=0, stream=None)` launches through nanocuda.launch.
    `f[grid, block]` or `f[grid, block, shared_mem]` returns a callable bound to that
    config (a cached nanocuda.Launcher, given the default stream at each call).
    `f.bind(config, stream=)` returns the raw Launcher for the hottest loops.
    """

    def __init__(self, kernel, name: str):
        self.kernel = kernel
        self.name = name
        self._launchers: dict[tuple, object] = {}

    def __call__(self, *args, grid, block, shared_mem: int = 0, stream=None):
        import nanocuda

        nanocuda.launch(stream if stream is not None else default_stream(),
                        _config(grid, block, shared_mem), self.kernel, *args)

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 3:
            raise TypeError(f"{self.name}[grid, block] or [grid, block, shared_mem], got {config!r}")
        key = tuple(tuple(c) if isinstance(c, list) else c for c in config)
        launcher = self._launchers.get(key)
        if launcher is None:
            launcher = self.kernel.bind(_config(*key), stream=default_stream())
            self._launchers[key] = launcher

        def bound(*args, stream=None):
            return launcher(*args, stream=stream if stream is not None else default_stream())

        return bound

    def bind(self, config, *, stream=None):
        return self.kernel.bind(config, stream=stream if stream is not None else default_stream())

    def as_op(self, name: str, schema: str, **options):
        """This kernel as a torch operator: nanocuda.torch_ops.op_from_kernel(self, name, schema, ...)."""
        from . import torch_ops

        return torch_ops.op_from_kernel(self, name, schema, **options)

    def __repr__(self) -> str:
        return f"<nanocuda kernel {self.name}>"


class CudaModule:
    """The kernels of one .cu file, as attributes; recompiled when the file changes."""

    def __init__(self, path: str | os.PathLike, *, include_dirs: Iterable[str | os.PathLike] = (),
                 check_changes: bool = True, **options):
        self.path = os.path.abspath(os.fspath(path))
        self.include_dirs = [os.path.dirname(self.path), *map(os.fspath, include_dirs), include_dir()]
        self.options = options
        self.check_changes = check_changes
        self._stamp: tuple = ()
        self._code = None
        self._functions: dict[str, KernelFunction] = {}
        self._compile()

    # -- compilation -------------------------------------------------------------------------
    def dependencies(self) -> list[str]:
        """The file and every local (quoted) header it includes, transitively, that exists:
        the files the compile cache key reads (one scanner, in C++)."""
        from . import _nanocuda

        with open(self.path, "rb") as f:
            source = f.read().decode("utf-8", errors="replace")
        return [self.path, *_nanocuda._internal.local_includes(
            source, os.path.dirname(self.path), self.include_dirs)]

    def _stamp_now(self) -> tuple:
        out = []
        for p in self._deps:
            try:
                st = os.stat(p)
                out.append((p, st.st_mtime_ns, st.st_size))
            except OSError:
                out.append((p, None, None))
        return tuple(out)

    def _compile(self) -> None:
        import nanocuda

        with open(self.path, encoding="utf-8") as f:
            source = f.read()
        self._deps = self.dependencies()
        self._stamp = self._stamp_now()
        # The cache keys on the content of the source and its quoted includes, so an
        # unchanged file costs one cache read, and an edit recompiles.
        self._code = nanocuda.compile(source, name=self.path, include_dirs=self.include_dirs,
                                      **self.options)
        self._functions = {}

    def reload_if_changed(self) -> bool:
        """Recompiles if the file or one of its local headers changed; True if it did."""
        if self._stamp_now() == self._stamp:
            return False
        self._compile()
        return True

    # -- access ------------------------------------------------------------------------------
    @property
    def code(self):
        """The nanocuda.ObjectCode (cubin) of the current file contents."""
        if self.check_changes:
            self.reload_if_changed()
        return self._code

    @property
    def kernel_names(self) -> list[str]:
        """The extern "C" (and other entry) names in the file, read from the cubin."""
        return cubin_kernel_names(self.code.code)

    def __getattr__(self, name: str) -> KernelFunction:
        if name.startswith("_"):
            raise AttributeError(name)
        code = self.code
        fn = self._functions.get(name)
        if fn is None:
            if name not in cubin_kernel_names(code.code):
                raise AttributeError(f"{os.path.basename(self.path)} has no kernel {name!r}; "
                                     f"kernels: {', '.join(self.kernel_names) or 'none'}")
            fn = KernelFunction(code.get_kernel(name), name)
            self._functions[name] = fn
        return fn

    def __dir__(self):
        return [*super().__dir__(), *self.kernel_names]

    def __repr__(self) -> str:
        return f"<nanocuda.CudaModule {self.path} kernels={self.kernel_names}>"


def load(path: str | os.PathLike, **options) -> CudaModule:
    """Compiles (or reads from the cache) the .cu file at `path` and returns its kernels.

    `options`: include_dirs, check_changes, and nanocuda.compile's (arch, defines, std,
    fast_math, lineinfo, ...). The file's folder and nanocuda's device headers
    (`#include "nanocuda/device/tma.cuh"`) are always on the include path.
    """
    return CudaModule(path, **options)


class _Folder:
    def __init__(self, modules: dict[str, CudaModule]):
        self.__dict__.update(modules)
        self.modules = modules

    def __repr__(self) -> str:
        return f"<nanocuda modules {sorted(self.modules)}>"


def load_dir(folder: str | os.PathLike, **options) -> _Folder:
    """Every `*.cu` file in `folder`, as attributes named by file stem: `load_dir(d).square`."""
    folder = os.fspath(folder)
    modules = {os.path.splitext(f)[0]: load(os.path.join(folder, f), **options)
               for f in sorted(os.listdir(folder)) if f.endswith(".cu")}
    return _Folder(modules)
