"""Fused LayerNorm + GELU as a torch operator with autograd, from the kernels in ln_gelu.cu.

    from ln_gelu import LayerNormGELU, ln_gelu
    y = ln_gelu(x, weight, bias, 1e-5)     # == F.gelu(F.layer_norm(x, (n,), weight, bias, 1e-5))

Two ops (nanocuda_example::ln_gelu and ::ln_gelu_backward) registered with
nanocuda.torch_ops.op; the forward op's derivative calls the backward op, so torch.compile
traces both passes without graph breaks and CUDA graphs capture them.
"""

from __future__ import annotations

import os

import torch

import nanocuda
from nanocuda import torch_ops

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCK = 256  # threads per row in the row kernels (a multiple of 32, <= 1024)
_modules: list = []


def kernels():
    """The compiled ln_gelu.cu (NVRTC on first use, then the disk cache); loaded lazily so
    that importing this file (and tracing with fake tensors) needs no GPU."""
    if not _modules:
        _modules.append(nanocuda.load(os.path.join(HERE, "ln_gelu.cu")))
    return _modules[0]


def _rows(x: torch.Tensor) -> int:
    return x.numel() // x.shape[-1] if x.numel() else 0


def _stats_fake(x, weight, bias, eps):
    stats = x.new_empty(x.shape[:-1])
    return torch.empty_like(x), stats, torch.empty_like(stats)


@torch_ops.op("nanocuda_example::ln_gelu_forward", fake=_stats_fake, dtypes="float32")
def ln_gelu_forward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                    eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """y = gelu(layer_norm(x) * weight + bias) over the last dimension; also mean and 1/std."""
    n, rows = x.shape[-1], _rows(x)
    if weight.shape != (n,) or bias.shape != (n,):
        raise ValueError(f"ln_gelu: weight and bias must have shape ({n},), got "
                         f"{tuple(weight.shape)} and {tuple(bias.shape)}")
    y, mean, rstd = _stats_fake(x, weight, bias, eps)
    if rows:
        kernels().ln_gelu_fwd[rows, BLOCK](x, weight, bias, y, mean, rstd, n, eps, stream=torch_ops.stream(x))
    return y, mean, rstd


def _grads_fake(dy, x, weight, bias, mean, rstd):
    return torch.empty_like(x), torch.empty_like(weight), torch.empty_like(bias)


@torch_ops.op("nanocuda_example::ln_gelu_backward", fake=_grads_fake, dtypes="float32")
def ln_gelu_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                     mean: torch.Tensor, rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of ln_gelu_forward's y with respect to x, weight and bias."""
    n, rows = x.shape[-1], _rows(x)
    dx, dw, db = _grads_fake(dy, x, weight, bias, mean, rstd)
    s, mod = torch_ops.stream(x), kernels()
    if rows:
        mod.ln_gelu_bwd_dx[rows, BLOCK](dy, x, weight, bias, mean, rstd, dx, n, stream=s)
        mod.ln_gelu_bwd_dwdb[(n + 255) // 256, 256](dy, x, weight, bias, mean, rstd, dw, db, rows, n, stream=s)
    else:
        dw.zero_()
        db.zero_()
    return dx, dw, db


def _setup_context(ctx, inputs, output):
    x, weight, bias, _ = inputs
    _, mean, rstd = output
    ctx.save_for_backward(x, weight, bias, mean, rstd)
    ctx.mark_non_differentiable(mean, rstd)


def _backward(ctx, dy, _dmean, _drstd):
    x, weight, bias, mean, rstd = ctx.saved_tensors
    dx, dw, db = ln_gelu_backward(dy.contiguous(), x, weight, bias, mean, rstd)
    return dx, dw, db, None


ln_gelu_forward.register_autograd(_backward, setup_context=_setup_context)


def ln_gelu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """gelu(layer_norm(x, (n,), weight, bias, eps)), fused, differentiable."""
    return ln_gelu_forward(x, weight, bias, eps)[0]


class LayerNormGELU(torch.nn.Module):
    """nn.LayerNorm followed by exact GELU, as one fused nanocuda op."""

    def __init__(self, n: int, eps: float = 1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n))
        self.bias = torch.nn.Parameter(torch.zeros(n))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ln_gelu(x, self.weight, self.bias, self.eps)
