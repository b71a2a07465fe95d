"""Square a torch tensor with examples/kernels/square.cu (the template's first kernel)."""
import os

import torch

import nanocuda

HERE = os.path.dirname(os.path.abspath(__file__))
mod = nanocuda.load(os.path.join(HERE, "square.cu"))


def square(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    mod.square[min((n + 255) // 256, 65535), 256](x, out, n)  # on torch's current stream
    return out


if __name__ == "__main__":
    x = torch.randn(1 << 20, device="cuda")
    y = square(x)
    torch.testing.assert_close(y, x * x)
    print(f"square: {x.numel()} elements correct")
