"""A two-layer MLP whose hidden bias + GELU is the nanocuda op of bias_gelu.py, trained a few
SGD steps under jax.jit and checked against the same model written in plain JAX.

    XLA_PYTHON_CLIENT_PREALLOCATE=false python examples/jax_ops/train.py   # a CUDA GPU and jax[cuda]
"""

from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bias_gelu import bias_gelu, reference  # noqa: E402

D_IN, HIDDEN, D_OUT, BATCH, LR = 64, 256, 10, 128, 0.05


def init_params(seed=0):
    k1, k2 = jax.random.split(jax.random.PRNGKey(seed))
    return {"w1": jax.random.normal(k1, (D_IN, HIDDEN)) / D_IN ** 0.5, "b1": jnp.full((HIDDEN,), 0.1),
            "w2": jax.random.normal(k2, (HIDDEN, D_OUT)) / HIDDEN ** 0.5, "b2": jnp.zeros((D_OUT,))}


def batches(count, seed=1):
    keys = jax.random.split(jax.random.PRNGKey(seed), count)
    out = []
    for k in keys:
        kx, ky = jax.random.split(k)
        out.append((jax.random.normal(kx, (BATCH, D_IN)), jax.random.normal(ky, (BATCH, D_OUT))))
    return out


def loss(params, x, y, fused=True):
    act = bias_gelu if fused else reference
    h = act(x @ params["w1"], params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def make_step(fused=True):
    """One jitted SGD step: (params, x, y) -> (params, loss)."""
    @jax.jit
    def step(params, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y, fused)
        return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads), value

    return step


def train(fused, steps=5):
    params, step, losses = init_params(), make_step(fused), []
    for x, y in batches(steps):
        params, value = step(params, x, y)
        losses.append(float(value))
    return params, losses


def main() -> int:
    jax.config.update("jax_default_matmul_precision", "highest")  # compare without TF32 noise
    (p_fused, l_fused), (p_plain, l_plain) = train(True), train(False)
    print("loss (nanocuda bias_gelu):", " ".join(f"{v:.5f}" for v in l_fused))
    print("loss (plain JAX)         :", " ".join(f"{v:.5f}" for v in l_plain))
    worst = max(float(jnp.max(jnp.abs(p_fused[k] - p_plain[k]))) for k in p_fused)
    ok = l_fused[-1] < l_fused[0] and worst < 1e-4 and all(abs(a - b) < 1e-4 for a, b in zip(l_fused, l_plain))
    print(f"largest parameter difference after {len(l_fused)} steps: {worst:.2e} -> {'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
