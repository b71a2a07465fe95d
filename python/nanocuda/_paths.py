"""Files that ship with the package: the kernel-side headers and the example kernels."""

from __future__ import annotations

import os


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
    if not isinstance(name, str):
        raise TypeError(f"example_path: name must be a str (a file name), got {type(name).__name__}")
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (os.path.join(here, "examples"),
                   os.path.join(here, os.pardir, os.pardir, "examples", "kernels")):
        path = os.path.normpath(os.path.join(folder, name))
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"example kernel {name} not found (reinstall nanocuda)")
