"""torch_ops helpers: torch import, streams, tensor-parameter specs and output allocation."""

from __future__ import annotations

import atexit
import os
import re
import sys
import weakref

device_type = "cuda"  # the device type ops check for; only CPU-only tests of the plumbing change it
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*$")
_registered: dict[str, str] = {}  # qualname -> where it was registered (for the error)
_streams: dict[int, object] = {}  # torch stream handle (or ~device for the legacy one) -> Stream
_ops: weakref.WeakSet = weakref.WeakSet()  # every Op made, to let go of its kernels at exit
_VERIFY_CALLS = 4  # the first calls of an op with a fake function compare its outputs with it


def _torch():
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError as e:
            raise ImportError("nanocuda.torch_ops needs PyTorch (pip install torch)") from e
    return torch


def stream(tensor_or_device=None):
    """torch's current stream on a tensor's (or device index's) CUDA device, as a nanocuda.Stream.

    Launch on it inside an op so the op follows `torch.cuda.stream(...)` and CUDA graph capture:
    `mod.k[grid, block](x, out, n, stream=torch_ops.stream(x))`. Default: the current device.
    """
    torch = _torch()
    if tensor_or_device is None:
        device = torch.cuda.current_device()
    elif isinstance(tensor_or_device, int):
        device = tensor_or_device
    else:
        device = tensor_or_device.get_device()
        if device < 0:
            raise ValueError(f"torch_ops.stream: {_describe(tensor_or_device)} is not a CUDA tensor")
    return _stream_on(device)


def _stream_on(device: int):
    handle = _torch()._C._cuda_getCurrentRawStream(device)
    key = handle or ~device  # handle 0 is the legacy stream of each device
    s = _streams.get(key)
    if s is None:
        import nanocuda

        s = (nanocuda.Stream.from_handle(handle, device) if handle
             else nanocuda.Stream.legacy(nanocuda.Device(device)))
        if len(_streams) > 512:  # torch's pools bound the handles; this bounds anything else
            _streams.clear()
        _streams[key] = s
    return s


def _describe(t) -> str:
    return f"{t.dtype} tensor of shape {tuple(t.shape)} on {t.device}"


def _dtype(torch, d):
    if isinstance(d, str):
        value = getattr(torch, d, None)
        if not isinstance(value, torch.dtype):
            raise ValueError(f"unknown dtype name {d!r} (expected e.g. 'float32')")
        return value
    if not isinstance(d, torch.dtype):
        raise TypeError(f"expected a torch.dtype or its name, got {d!r}")
    return d


class _Param:
    """One tensor parameter of an op's schema and what the kernel needs of it."""

    __slots__ = ("pos", "name", "dtypes", "contiguous", "is_list", "optional")

    def __init__(self, pos, name, dtypes, contiguous, is_list, optional):
        self.pos, self.name, self.dtypes, self.contiguous = pos, name, dtypes, contiguous
        self.is_list, self.optional = is_list, optional


class _Outputs:
    """Output tensors allocated like input tensors (`like=`), optionally with other shapes."""

    def __init__(self, op: Op, like, out_shape):
        names = op._arg_names
        tensor_names = [p.name for p in op._params if not p.is_list]
        if like is None:
            if not tensor_names:
                raise ValueError(f"torch_ops {op.name}: like= needs a tensor argument to copy")
            like = tensor_names[0]
        likes = [like] * op._n_out if isinstance(like, str) else list(like)
        if len(likes) != op._n_out:
            raise ValueError(f"torch_ops {op.name}: like= names {len(likes)} input(s) for "
                             f"{op._n_out} output(s)")
        for n in likes:
            if n not in tensor_names:
                raise ValueError(f"torch_ops {op.name}: like={n!r} is not a tensor argument "
                                 f"(tensor arguments: {', '.join(tensor_names) or 'none'})")
        self.op, self.positions, self.out_shape = op, [names.index(n) for n in likes], out_shape

    def make(self, args, kwargs) -> list:
        torch = _torch()
        op = self.op
        sources = [args[p] if p < len(args) else kwargs[op._arg_names[p]] for p in self.positions]
        if self.out_shape is None:
            return [torch.empty_like(s, memory_format=torch.contiguous_format) for s in sources]
        shapes = self.out_shape(*args, **kwargs)
        shapes = _shapes(torch, op, shapes)
        return [torch.empty(shape, dtype=s.dtype, device=s.device) for shape, s in zip(shapes, sources)]


def _shapes(torch, op, shapes) -> list:
    def is_shape(v):
        return isinstance(v, (tuple, list, torch.Size)) and all(
            isinstance(d, (int, torch.SymInt)) and not isinstance(d, bool) for d in v)

    if is_shape(shapes) and (op._n_out == 1 or not shapes):
        shapes = [shapes]
    if not isinstance(shapes, (tuple, list)) or len(shapes) != op._n_out or not all(map(is_shape, shapes)):
        raise ValueError(f"{op.name}: the output-shape function returned {shapes!r}; expected "
                         f"{'a shape (a tuple of ints)' if op._n_out == 1 else f'{op._n_out} shapes'}")
    for s in shapes:
        for d in s:
            if isinstance(d, int) and d < 0:
                raise ValueError(f"{op.name}: the output-shape function returned a negative size in {tuple(s)}")
    return shapes


def _label(p: _Param, i) -> str:
    return f"{p.name!r}" if i is None else f"{p.name}[{i}]"


def _where(fn) -> str:
    code = getattr(fn, "__code__", None)
    if code is None:
        return "?"
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def _exists(torch, name: str) -> bool:
    try:
        torch._C._dispatch_find_schema_or_throw(name, "")
        return True
    except RuntimeError:
        return False


def _names(value, all_names: list[str], what: str, name: str) -> set[str]:
    if value is True:
        return set(all_names)
    if value is None or value is False:
        return set()
    chosen = {value} if isinstance(value, str) else set(value)
    for n in chosen:
        if n not in all_names:
            raise ValueError(f"torch_ops {name}: {what} names {n!r}, which is not a tensor argument "
                             f"(tensor arguments: {', '.join(all_names) or 'none'})")
    return chosen


def _tensor_params(torch, name, parsed, dtypes, contiguous) -> list[_Param]:
    kinds = {}
    for i, a in enumerate(parsed.arguments):
        t = str(a.type)
        if t == "Tensor":
            kinds[a.name] = (i, False, False)
        elif t in ("Optional[Tensor]", "Tensor?"):
            kinds[a.name] = (i, False, True)
        elif t in ("List[Tensor]", "Tensor[]", "List[Optional[Tensor]]", "Tensor?[]"):
            kinds[a.name] = (i, True, "?" in t or "Optional" in t)
    all_names = list(kinds)
    if dtypes is None or isinstance(dtypes, dict):
        per = dict(dtypes or {})
        _names(set(per), all_names, "dtypes=", name)
    else:  # one dtype (or a tuple) for every tensor argument
        per = {n: dtypes for n in all_names}
    cont = _names(contiguous, all_names, "contiguous=", name)
    out = []
    for n, (pos, is_list, optional) in kinds.items():
        d = per.get(n)
        if d is not None:
            d = tuple(_dtype(torch, x) for x in (d if isinstance(d, (tuple, list, set, frozenset)) else (d,)))
        out.append(_Param(pos, n, d, n in cont, is_list, optional))
    return out




@atexit.register
def _release_kernels() -> None:
    # torch's operator registry keeps every op (and so its kernels and launch function) alive
    # until the interpreter is torn down; letting go of them here frees nanocuda's objects
    # while the extension is still intact.
    for op in list(_ops):
        op._release()
    _streams.clear()
