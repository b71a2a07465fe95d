"""A tiny package whose kernels ship as fatbins built with `nanocuda build` (no NVRTC at run time).

    import aot_demo
    aot_demo.kernels().scale[grid, 256](x, 2.0, n)
    out = aot_demo.axpy(2.0, x, y)          # a torch op (nanocuda.torch_ops), if torch is installed
"""

from __future__ import annotations

import os

import nanocuda

HERE = os.path.dirname(os.path.abspath(__file__))
PREBUILT = os.path.join(HERE, "prebuilt")  # filled by the wheel build (setup.py)
_modules: list = []


def kernels() -> nanocuda.CudaModule:
    """vec.cu's kernels, from the prebuilt fatbin (loaded on first use, so import needs no GPU)."""
    if not _modules:
        _modules.append(nanocuda.load(os.path.join(HERE, "kernels", "vec.cu"), prebuilt=PREBUILT))
    return _modules[0]


def __getattr__(name: str):
    if name == "axpy":  # the torch op, imported only when asked for (torch is optional)
        from .ops import axpy

        return axpy
    raise AttributeError(name)
