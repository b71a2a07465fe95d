"""The fused bias + GELU kernel of bias_gelu.cu as a JAX op with its backward kernel."""

from __future__ import annotations

import os

import jax

import nanocuda
from nanocuda import jax_ops

mod = nanocuda.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bias_gelu.cu"))
BLOCK = 256


def _grid(x, b):
    return (x.size + BLOCK - 1) // BLOCK


def _backward(inputs, out, g):
    x, b = inputs
    dx = jax_ops.launch(mod.bias_gelu_backward, lambda dx: (x, b, g, dx, x.shape[0], x.shape[1]),
                        out=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=_grid(x, b), block=BLOCK,
                        name="bias_gelu_backward")
    return dx, dx.sum(axis=0)


# gelu(x + b) for x [rows, cols] and b [cols], float32; differentiable in x and b.
bias_gelu = mod.bias_gelu.as_jax_op(
    "bias_gelu", inputs="x, b", dtypes="float32", ndim={"x": 2, "b": 1},
    grid=_grid, block=BLOCK, args=lambda x, b, out: (x, b, out, x.shape[0], x.shape[1]),
    backward=_backward, vmap_method="sequential")


def reference(x, b):
    """The same function in plain JAX."""
    return jax.nn.gelu(x + b, approximate=True)
