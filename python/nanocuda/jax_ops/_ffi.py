"""The XLA FFI handler of jax_ops: built on demand against jaxlib's headers, cached, registered."""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

TARGET = "nanocuda_launch"  # the one custom-call target every jax_ops launch uses
SYMBOL = "NanocudaJaxLaunch"
CHECK_TARGET = "nanocuda_pack_only"  # the same attributes, bytes returned instead of launched
_SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_jax_ffi", "handler.cpp")
_lock = threading.Lock()
_library = None  # the loaded handler library (kept for the process: XLA holds its symbol)
_registered = False


def _jax():
    from ._spec import _jax as get

    return get()


def library_name() -> str:
    """The handler's file name: one per handler source and jaxlib version."""
    import jaxlib

    with open(_SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read() + jaxlib.__version__.encode()).hexdigest()[:12]
    return f"nanocuda_jax_ffi_{digest}.so"


def build_directory() -> str:
    """Where the handler for the installed jaxlib is (or would be) built."""
    from .. import _nanocuda

    return os.path.join(_nanocuda.compile_cache_dir(), "jax_ffi")


def _compiler() -> str:
    for c in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if c and shutil.which(c):
            return c
    raise RuntimeError("nanocuda.jax_ops: no C++ compiler found to build the XLA FFI handler "
                       "(set CXX, or install g++)")


def _private(directory: str) -> None:
    # The handler is a shared library loaded into this process: only a folder this user owns
    # and others cannot write is trusted to hold it.
    os.makedirs(directory, mode=0o700, exist_ok=True)
    st = os.stat(directory)
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise RuntimeError(f"nanocuda.jax_ops: {directory} is not owned by this user or is writable by "
                           f"others; refusing to build or load the XLA FFI handler there (set "
                           f"NANOCUDA_CACHE_DIR to a private folder)")


def build(verbose: bool = False) -> str:
    """Builds the handler for the installed jaxlib if it is not cached yet; returns its path.

    Needs a C++17 compiler and jaxlib's FFI headers (`jax.ffi.include_dir()`), no CUDA
    toolkit: the handler declares the two driver types it uses."""
    jax = _jax()
    directory = build_directory()
    _private(directory)
    path = os.path.join(directory, library_name())
    if os.path.isfile(path):
        return path
    include = jax.ffi.include_dir()
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=directory)
    os.close(fd)
    cmd = [_compiler(), "-std=c++17", "-O2", "-shared", "-fPIC", "-fvisibility=hidden",
           "-isystem", include, _SOURCE, "-o", tmp, "-ldl"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"nanocuda.jax_ops: building the XLA FFI handler failed:\n  "
                               f"{' '.join(cmd)}\n{done.stderr[-4000:]}")
        if verbose:
            print(" ".join(cmd))
        os.replace(tmp, path)  # atomic: a concurrent build of the same source is no race
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def ensure_registered() -> None:
    """Builds (first time), loads and registers the handler for the CUDA platform, once."""
    global _library, _registered
    if _registered:
        return
    with _lock:
        if _registered:
            return
        jax = _jax()
        path = build()
        st = os.stat(path)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise RuntimeError(f"nanocuda.jax_ops: {path} is not owned by this user or is writable by "
                               f"others; not loading it")
        _library = ctypes.CDLL(path)
        jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(getattr(_library, SYMBOL)), platform="CUDA")
        _registered = True


def register_pack_only() -> str:
    """Registers the handler's pack-only twin on the CPU platform (for tests: what the handler
    would pass cuLaunchKernel, returned as a last uint8 result); returns its target name."""
    global _check_registered
    ensure_registered()
    if not _check_registered:
        jax = _jax()
        jax.ffi.register_ffi_target(CHECK_TARGET, jax.ffi.pycapsule(_library.NanocudaJaxPackOnly),
                                    platform="cpu")
        _check_registered = True
    return CHECK_TARGET


_check_registered = False
