"""aot_demo::axpy as a torch operator over the prebuilt axpy kernel."""

from __future__ import annotations

import torch

from nanocuda import torch_ops

from . import kernels

BLOCK = 256


def _fake(a, x, y):
    return torch.empty_like(x)


@torch_ops.op("aot_demo::axpy", fake=_fake, dtypes="float32")
def axpy(a: float, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """a * x + y, elementwise, for contiguous float32 CUDA tensors of one shape."""
    if x.shape != y.shape:
        raise ValueError(f"aot_demo.axpy: x and y must have one shape, got {tuple(x.shape)} and {tuple(y.shape)}")
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        kernels().axpy[(n + BLOCK - 1) // BLOCK, BLOCK](out, x, y, a, n, stream=torch_ops.stream(x))
    return out
