"""One kernel of a CudaModule as a callable, and the default stream its launches use."""

from __future__ import annotations

import sys


_streams: dict[tuple, object] = {}
_torch_cuda: list[bool] = []


def _torch_has_cuda(torch) -> bool:
    # Asked once: is_available() costs microseconds and this runs on every launch.
    if not _torch_cuda:
        _torch_cuda.append(bool(torch.cuda.is_available()))
    return _torch_cuda[0]


def default_stream():
    """torch's current stream when torch is imported, else the legacy stream of the default
    Device() (the current context's device, else 0)."""
    import nanocuda

    torch = sys.modules.get("torch")
    if torch is not None and _torch_has_cuda(torch):
        handle = torch.cuda.current_stream().cuda_stream
        device = torch.cuda.current_device()
        key = (handle, device)
    else:
        device = nanocuda.Device().device_id
        handle, key = 0, (0, device)
    stream = _streams.get(key)
    if stream is None:
        stream = (nanocuda.Stream.from_handle(handle, device) if handle
                  else nanocuda.Stream.legacy(nanocuda.Device(device)))
        _streams[key] = stream
    return stream


def _config(grid, block, shared_mem=0):
    import nanocuda

    return nanocuda.LaunchConfig(grid=grid, block=block, shared_mem=shared_mem)


class KernelFunction:
    """One kernel of a CudaModule: call it with `grid=`/`block=`, or index it with a config.

    `f(*args, grid=, block=, shared_mem=0, stream=None)` launches through nanocuda.launch.
    `f[grid, block]` or `f[grid, block, shared_mem]` returns a callable bound to that
    config (a cached nanocuda.Launcher, given the default stream at each call).
    `f.bind(config, stream=)` returns the raw Launcher for the hottest loops.
    """

    def __init__(self, kernel, name: str):
        self.kernel = kernel
        self.name = name
        self._launchers: dict[tuple, object] = {}

    def __call__(self, *args, grid, block, shared_mem: int = 0, stream=None):
        import nanocuda

        nanocuda.launch(stream if stream is not None else default_stream(),
                        _config(grid, block, shared_mem), self.kernel, *args)

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 3:
            raise TypeError(f"{self.name}[grid, block] or [grid, block, shared_mem], got {config!r}")
        key = tuple(tuple(c) if isinstance(c, list) else c for c in config)
        launcher = self._launchers.get(key)
        if launcher is None:
            launcher = self.kernel.bind(_config(*key), stream=default_stream())
            self._launchers[key] = launcher

        def bound(*args, stream=None):
            return launcher(*args, stream=stream if stream is not None else default_stream())

        return bound

    def bind(self, config, *, stream=None):
        return self.kernel.bind(config, stream=stream if stream is not None else default_stream())

    def as_op(self, name: str, schema: str, **options):
        """This kernel as a torch operator: nanocuda.torch_ops.op_from_kernel(self, name, schema, ...)."""
        from . import torch_ops

        return torch_ops.op_from_kernel(self, name, schema, **options)

    def as_jax_op(self, name: str, **options):
        """This kernel as a JAX op: nanocuda.jax_ops.op_from_kernel(self, name, ...)."""
        from . import jax_ops

        return jax_ops.op_from_kernel(self, name, **options)

    def __repr__(self) -> str:
        return f"<nanocuda kernel {self.name}>"
