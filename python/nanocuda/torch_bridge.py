"""The torch bridge: torch tensors read at C++ speed, opt-in.

nanocuda reads a torch tensor's pointer, device and geometry through torch's DLPack C
exchange API. That is correct for every tensor, but it costs 60-170 ns per tensor (measured
on H100/H200 hosts), which is most of what separates a launch with 3 tensors from a C++
launch. The bridge is a ~100-line C++ reader compiled once, on this machine, against the
installed torch (``torch.utils.cpp_extension``), so it can read the ``at::Tensor`` directly;
anything unusual (no storage, conj/neg views, other layouts or devices, other dtypes) still
goes through torch's own function, so results and errors are unchanged.

    import nanocuda.torch_bridge
    nanocuda.torch_bridge.enable()      # first time: builds (~20-60 s), then cached

Enable it at startup: a Launcher decides how to read each argument on its first call and
keeps that choice. ``disable()`` returns to the exchange API for new decisions.
"""

from __future__ import annotations

import hashlib
import os
import time

__all__ = ["enable", "disable", "is_enabled"]

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torch_bridge", "bridge.cpp")
_module = None


def _types():
    import torch

    # Exact types only: other subclasses (FakeTensor, DTensor, ...) may not own their data.
    return (torch.Tensor, torch.nn.Parameter)


def _module_name() -> str:
    import torch

    with open(_SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read() + torch.__version__.encode()).hexdigest()[:12]
    return f"nanocuda_torch_bridge_{digest}"


def enable(verbose: bool = False) -> float:
    """Builds (once per torch version, cached by torch) and installs the bridge.

    Returns the seconds spent (building or loading). Raises ImportError without torch, and
    RuntimeError with the compiler's output when the build fails; nanocuda keeps working
    through the exchange API either way."""
    global _module
    from . import _nanocuda

    t0 = time.perf_counter()
    if _module is None:
        try:
            from torch.utils import cpp_extension
        except ImportError as e:
            raise ImportError("nanocuda.torch_bridge.enable: needs PyTorch") from e
        try:
            _module = cpp_extension.load(name=_module_name(), sources=[_SOURCE],
                                         extra_cflags=["-O2"], verbose=verbose)
        except Exception as e:  # torch raises RuntimeError/CalledProcessError with the log
            raise RuntimeError(f"nanocuda.torch_bridge.enable: building {_SOURCE} failed: {e}") from e
    for t in _types():
        _nanocuda._set_tensor_reader(t, _module.reader, _module.fallback_slot)
    return time.perf_counter() - t0


def disable() -> None:
    """Back to torch's DLPack exchange API for readers chosen from now on."""
    from . import _nanocuda

    if _module is None:
        return
    for t in _types():
        _nanocuda._set_tensor_reader(t, None)


def is_enabled() -> bool:
    from . import _nanocuda

    try:
        import torch
    except ImportError:
        return False
    return bool(_nanocuda._tensor_reader_is_replaced(torch.Tensor))
