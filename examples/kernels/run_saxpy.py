"""SAXPY from Python as in the CUDA Python overview, with nanocuda: numpy in, numpy out."""
import os

import numpy as np

import nanocuda

HERE = os.path.dirname(os.path.abspath(__file__))


def main(threads: int = 512, blocks: int = 32768) -> None:
    saxpy = nanocuda.load(os.path.join(HERE, "saxpy.cu")).saxpy
    n = threads * blocks
    a = np.float32(2.0)
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    out = np.zeros(n, dtype=np.float32)

    stream = nanocuda.Stream()
    dx, dy, dout = (nanocuda.Buffer(x.nbytes, stream=stream) for _ in range(3))
    nanocuda.copy(dx, x, stream=stream)
    nanocuda.copy(dy, y, stream=stream)
    saxpy(a, dx, dy, dout, n, grid=blocks, block=threads, stream=stream)
    nanocuda.copy(out, dout, stream=stream)
    stream.sync()

    assert np.allclose(out, a * x + y), "saxpy result outside tolerance"
    print(f"saxpy: {n} elements correct")


if __name__ == "__main__":
    main()
