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
from collections.abc import Iterable

from . import _aot
from ._cubin import cubin_kernel_names
from ._kernel_function import KernelFunction, default_stream
from ._paths import example_path, include_dir

__all__ = ["CudaModule", "KernelFunction", "cubin_kernel_names", "default_stream", "example_path",
           "include_dir", "load", "load_dir"]


class CudaModule:
    """The kernels of one .cu file, as attributes; recompiled when the file changes."""

    def __init__(self, path: str | os.PathLike, *, include_dirs: Iterable[str | os.PathLike] = (),
                 check_changes: bool = True, prebuilt: str | os.PathLike | None = None, **options):
        self.path = os.path.abspath(os.fspath(path))
        self._user_include_dirs = list(map(os.fspath, include_dirs))
        self.include_dirs = [os.path.dirname(self.path), *self._user_include_dirs, include_dir()]
        self.options = options
        self.prebuilt = prebuilt
        self.manifest: dict | None = None
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
        self._functions = {}
        # A fatbin from `nanocuda build` whose manifest matches stands in for the compile.
        if found := _aot.find_prebuilt(self.path, source, self._user_include_dirs, self.options, self.prebuilt):
            self._code, self.manifest = found
            return
        self.manifest = None
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
        """The extern "C" (and other entry) names in the file, read from the cubin (or, for a
        prebuilt fatbin, its manifest; empty for a PTX-only one)."""
        code = self.code
        if self.manifest is not None:
            return [name for name, _ in self.manifest["kernels"]]
        return cubin_kernel_names(code.code)

    def __getattr__(self, name: str) -> KernelFunction:
        if name.startswith("_"):
            raise AttributeError(name)
        code = self.code
        fn = self._functions.get(name)
        if fn is None:
            names = self.kernel_names
            if (names or self.manifest is None) and name not in names:
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

    `prebuilt`: a folder of `nanocuda build` output. A `<stem>.fatbin` there (or beside the
    file) whose manifest matches the source and options is used without NVRTC; a stale one,
    or one with no image for the GPU, is compiled over (PrebuiltError when NVRTC is absent).
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
