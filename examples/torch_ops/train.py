"""A small MLP whose LayerNorm + GELU blocks are the nanocuda op from ln_gelu.py, trained a
few steps with torch.compile and checked against the same model written with plain PyTorch.

    python examples/torch_ops/train.py            # needs a CUDA GPU and torch
"""

from __future__ import annotations

import copy
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ln_gelu import LayerNormGELU  # noqa: E402


class PlainLayerNormGELU(torch.nn.Module):
    """The reference: torch's own layer_norm, then exact GELU (same parameters)."""

    def __init__(self, n: int, eps: float = 1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n))
        self.bias = torch.nn.Parameter(torch.zeros(n))
        self.eps = eps

    def forward(self, x):
        return F.gelu(F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps))


class MLP(torch.nn.Module):
    """in -> [Linear -> LayerNorm+GELU] x depth -> Linear -> out."""

    def __init__(self, d_in=64, hidden=256, d_out=10, depth=2, fused=True):
        super().__init__()
        block = LayerNormGELU if fused else PlainLayerNormGELU
        layers, d = [], d_in
        for _ in range(depth):
            layers += [torch.nn.Linear(d, hidden), block(hidden)]
            d = hidden
        layers.append(torch.nn.Linear(d, d_out))
        self.net = torch.nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def make_pair(seed=0, **kw):
    """The fused model and a plain twin with identical parameters, on the GPU."""
    torch.manual_seed(seed)
    fused = MLP(fused=True, **kw).cuda()
    plain = MLP(fused=False, **kw).cuda()
    plain.load_state_dict(copy.deepcopy(fused.state_dict()))
    return fused, plain


def batches(steps, batch=128, d_in=64, d_out=10, seed=1):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return [(torch.randn(batch, d_in, device="cuda", generator=g),
             torch.randint(0, d_out, (batch,), device="cuda", generator=g)) for _ in range(steps)]


def make_step(model, compile_mode=None):
    """One training step (forward, loss, backward, SGD update); the forward and loss are
    compiled with fullgraph=True when compile_mode is given ("default", "reduce-overhead")."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def loss_fn(x, y):
        return F.cross_entropy(model(x), y)

    if compile_mode is not None:
        loss_fn = torch.compile(loss_fn, fullgraph=True, mode=compile_mode)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(x, y)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


def main(steps=5, compile_mode="default"):
    fused, plain = make_pair()
    data = batches(steps)
    step_fused, step_plain = make_step(fused, compile_mode), make_step(plain)
    for i, (x, y) in enumerate(data):
        a, b = step_fused(x, y).item(), step_plain(x, y).item()
        print(f"step {i}: loss nanocuda op (compiled, {compile_mode}) {a:.6f}  plain PyTorch {b:.6f}")
        assert abs(a - b) <= 1e-4 * max(1.0, abs(b)), (a, b)
    for (name, p), q in zip(fused.named_parameters(), plain.parameters()):
        assert torch.allclose(p, q, atol=1e-4, rtol=1e-4), name
    explain = torch._dynamo.explain(lambda x, y: F.cross_entropy(fused(x), y))(*data[0])
    print(f"graph breaks: {explain.graph_break_count}; parameters match plain PyTorch after {steps} steps")


if __name__ == "__main__":
    main(compile_mode=sys.argv[1] if len(sys.argv) > 1 else "default")
