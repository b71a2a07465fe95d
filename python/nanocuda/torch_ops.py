"""nanocuda kernels as PyTorch operators (torch.library custom ops); imports torch only when used.

Two forms. A decorator on a function that launches nanocuda kernels:

    @torch_ops.op("mylib::scale", like="x", dtypes={"x": torch.float32})
    def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
        out = torch.empty_like(x)
        mod.scale[grid(x), 256](x, out, alpha, x.numel(), stream=torch_ops.stream(x))
        return out

and a shorthand for one kernel whose outputs are allocated like an input:

    scale = torch_ops.op_from_kernel(mod.scale, "mylib::scale", "(Tensor x, float alpha) -> Tensor",
                                     args=lambda x, alpha, out: (x, out, alpha, x.numel()),
                                     grid=lambda x, alpha: (x.numel() + 255) // 256, block=256)

Either gives an `Op`: a torch operator (`torch.ops.mylib.scale`) with a fake implementation,
so torch.compile(fullgraph=True) traces it without graph breaks, CUDA graphs capture it, and
optional autograd (`backward=`) and vmap rules. Tensor arguments are checked (CUDA, one
device, declared dtypes, contiguity) before anything launches, in eager and under compile.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence

__all__ = ["Op", "op", "op_from_kernel", "stream"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*$")
_registered: dict[str, str] = {}  # qualname -> where it was registered (for the error)
_streams: dict[int, object] = {}  # torch stream handle (or ~device for the legacy one) -> Stream
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

    __slots__ = ("pos", "name", "dtypes", "contiguous", "is_list")

    def __init__(self, pos, name, dtypes, contiguous, is_list):
        self.pos, self.name, self.dtypes, self.contiguous, self.is_list = pos, name, dtypes, contiguous, is_list


class Op:
    """A nanocuda-backed torch operator. Call it like a function; `Op.default` is the
    OpOverload (`torch.ops.ns.name.default`) that torch.compile records in its graphs.

    In plain eager calls (no autograd needed, no torch.compile tracing, no dispatch or
    function mode, no vmap, plain tensors) the call skips torch's dispatcher and runs the
    checked launch directly: the same code the dispatcher would reach, without its ~5-20 µs.
    """

    _device_type = "cuda"  # tests on machines without a GPU set "cpu" on an instance

    def __init__(self, name: str, fn: Callable, *, schema: str, mutates_args=(), fake=None,
                 like=None, out_shape=None, dtypes=None, contiguous=True, backward=None,
                 setup_context=None, vmap=None):
        torch = _torch()
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"torch_ops: op name must be 'namespace::name' (identifiers), got {name!r}")
        where = _where(fn)
        if name in _registered or _exists(torch, name):
            before = _registered.get(name, "outside nanocuda")
            raise ValueError(f"torch_ops: an operator named {name!r} is already registered ({before}); "
                             f"each op needs its own name (registering again at {where})")
        if fake is not None and (like is not None or out_shape is not None):
            raise ValueError(f"torch_ops {name}: give fake= or like=/out_shape=, not both")
        self.name = name
        self._fn = fn
        parsed = torch._C.parse_schema(name + schema)
        self._arg_names = [a.name for a in parsed.arguments]
        self._n_out = len(parsed.returns)
        self._returns_tensors = [str(r.type) in ("Tensor", "Optional[Tensor]", "Tensor?")
                                 for r in parsed.returns]
        self._params = _tensor_params(torch, name, parsed, dtypes, contiguous)
        self._outputs = _Outputs(self, like, out_shape) if (like is not None or out_shape is not None) else None
        self._fake = fake
        # The first calls compare the function's outputs with what torch.compile will be told.
        self._verify_left = _VERIFY_CALLS if (fake is not None or self._outputs is not None) else 0
        self._C = torch._C
        self._Tensor = torch.Tensor
        self._is_compiling = torch.compiler.is_compiling
        custom = torch.library.custom_op(name, self._run_dispatched, mutates_args=mutates_args,
                                         schema=schema)
        self.custom_op = custom
        self.default = custom._opoverload
        custom.register_fake(self._fake_impl)
        _registered[name] = where
        if backward is not None:
            custom.register_autograd(backward, setup_context=setup_context)
        if vmap is not None:
            torch.library.register_vmap(custom, vmap)

    # -- registration of more behaviour ---------------------------------------------------------
    def register_autograd(self, backward: Callable, *, setup_context: Callable | None = None) -> None:
        """The op's derivative: `backward(ctx, *grads)` (see torch.library.register_autograd)."""
        self.custom_op.register_autograd(backward, setup_context=setup_context)

    def register_vmap(self, rule: Callable) -> None:
        """The op's batching rule under torch.vmap (see torch.library.register_vmap)."""
        _torch().library.register_vmap(self.custom_op, rule)

    # -- calls ----------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if kwargs or not self._plain_eager(args):
            return self.default(*args, **kwargs)
        return self._run(args, {})

    def _plain_eager(self, args) -> bool:
        # torch.compile traces this with is_compiling() True, so its graph holds self.default.
        C = self._C
        if (self._is_compiling() or C._len_torch_dispatch_stack() or C._are_functorch_transforms_active()
                or C._is_torch_function_mode_enabled()):
            return False
        grad = C.is_grad_enabled()
        Tensor = self._Tensor
        for a in args:
            if type(a) is Tensor:
                if grad and a.requires_grad:
                    return False
            elif isinstance(a, (Tensor, list, tuple)):  # subclasses (fake, DTensor), tensor lists
                return False
        return True

    def _run_dispatched(self, *args, **kwargs):
        return self._run(args, kwargs)

    def _run(self, args, kwargs):
        self._check(args, kwargs)
        out = self._fn(*args, **kwargs)
        if self._verify_left:
            self._verify(args, kwargs, out)
        return out

    def _fake_impl(self, *args, **kwargs):
        self._check(args, kwargs)
        if self._fake is not None:
            return self._fake(*args, **kwargs)
        if self._outputs is not None:
            outs = self._outputs.make(args, kwargs)
            return outs[0] if self._n_out == 1 else tuple(outs)
        if self._n_out:
            raise NotImplementedError(f"torch_ops {self.name}: returns tensors but has no fake "
                                      f"function; give fake= or like=/out_shape= when registering")
        return None

    # -- checks ---------------------------------------------------------------------------------
    def _value(self, p, args, kwargs):
        return args[p.pos] if p.pos < len(args) else kwargs.get(p.name)

    def _check(self, args, kwargs) -> int:
        """Raises a clear error for a tensor the kernel cannot take; returns the device index."""
        device = -2
        cuda = self._device_type == "cuda"
        for p in self._params:
            t = args[p.pos] if p.pos < len(args) else kwargs.get(p.name)
            if t is None:
                continue
            for i, x in enumerate(t) if p.is_list else ((None, t),):
                if not (x.is_cuda if cuda else x.device.type == self._device_type):
                    raise ValueError(f"{self.name}: argument {_label(p, i)} must be a CUDA tensor, got a "
                                     f"{_describe(x)} (move it with .cuda())")
                d = x.get_device()
                if d != device:
                    if device != -2:
                        raise ValueError(f"{self.name}: argument {_label(p, i)} is on {x.device} but an "
                                         f"earlier tensor argument is on {self._device_type}:{device}; "
                                         f"all tensors of one call must be on one device")
                    device = d
                if p.dtypes is not None and x.dtype not in p.dtypes:
                    wanted = " or ".join(str(dt) for dt in p.dtypes)
                    raise TypeError(f"{self.name}: argument {_label(p, i)} is a {_describe(x)}; the "
                                    f"kernel was compiled for {wanted}")
                if p.contiguous and not x.is_contiguous():
                    raise ValueError(f"{self.name}: argument {_label(p, i)} must be contiguous (the kernel "
                                     f"reads it as dense row-major memory), got strides {tuple(x.stride())} "
                                     f"for shape {tuple(x.shape)}: pass {p.name}.contiguous()")
        return device

    def _verify(self, args, kwargs, out) -> None:
        """Compares the outputs with the fake function's (or like=/out_shape=) on meta tensors."""
        self._verify_left -= 1
        torch = _torch()
        to_meta = lambda v: torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta") \
            if isinstance(v, torch.Tensor) else v  # noqa: E731
        meta_args = [to_meta(a) for a in args]
        meta_kwargs = {k: to_meta(v) for k, v in kwargs.items()}
        if self._fake is None:  # like=/out_shape=: a bad shape function raises its own error here
            expected = self._outputs.make(meta_args, meta_kwargs)
            expected = expected[0] if self._n_out == 1 else expected
        else:
            try:
                with torch.no_grad():
                    expected = self._fake(*meta_args, **meta_kwargs)
            except Exception:  # noqa: BLE001 - a fake that needs fake-mode context is not checked here
                return
        got = out if isinstance(out, (tuple, list)) else (out,)
        want = expected if isinstance(expected, (tuple, list)) else (expected,)
        if len(got) != len(want):
            raise ValueError(f"{self.name}: the fake function returns {len(want)} output(s), the op "
                             f"returned {len(got)}")
        for i, (g, w) in enumerate(zip(got, want)):
            if isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor) and (
                    g.shape != w.shape or g.dtype != w.dtype):
                raise ValueError(f"{self.name}: output {i} is {g.dtype}{list(g.shape)} but the fake "
                                 f"(output-shape) function says {w.dtype}{list(w.shape)}; torch.compile "
                                 f"would plan with the wrong shape: fix the fake function")

    def __repr__(self) -> str:
        return f"<nanocuda torch op {self.name}>"


class KernelOp(Op):
    """An Op that launches one nanocuda kernel with outputs allocated by its output spec."""

    def __init__(self, kernel, name, schema, *, args, grid, block, shared_mem, **options):
        self._kernel = getattr(kernel, "kernel", kernel)  # a workflow KernelFunction or a Kernel
        self._args = args
        self._grid, self._block, self._shared_mem = grid, block, shared_mem
        self._launchers: dict = {}
        super().__init__(name, self._launch_unused, schema=schema, **options)
        if self._n_out and self._outputs is None:
            self._outputs = _Outputs(self, None, None)  # like the first tensor input
        self._verify_left = 0  # outputs come from the spec itself: nothing to compare

    def _launch_unused(self, *args, **kwargs):  # the body is _run below
        raise AssertionError("unreachable")

    def _run(self, args, kwargs):
        if kwargs:
            args = (*args, *(kwargs[n] for n in self._arg_names[len(args):]))
        device = self._check(args, {})
        outs = self._outputs.make(args, {}) if self._outputs is not None else []
        grid = self._grid(*args) if callable(self._grid) else self._grid
        key = (device, grid)
        launcher = self._launchers.get(key)
        if launcher is None:
            launcher = self._bind(device, grid)
        values = self._args(*args, *outs) if self._args is not None else (*args, *outs)
        launcher(*values, stream=_stream_on(device))
        if not outs:
            return None
        return outs[0] if self._n_out == 1 else tuple(outs)

    def _bind(self, device, grid):
        import nanocuda

        config = nanocuda.LaunchConfig(grid=grid, block=self._block, shared_mem=self._shared_mem)
        if len(self._launchers) > 256:  # many distinct grids (dynamic shapes): start over
            self._launchers.clear()
        launcher = self._launchers[(device, grid)] = self._kernel.bind(config, stream=_stream_on(device))
        return launcher


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
        if t in ("Tensor", "Optional[Tensor]", "Tensor?"):
            kinds[a.name] = (i, False)
        elif t in ("List[Tensor]", "Tensor[]", "List[Optional[Tensor]]", "Tensor?[]"):
            kinds[a.name] = (i, True)
    all_names = list(kinds)
    if dtypes is None or isinstance(dtypes, dict):
        per = dict(dtypes or {})
        _names(set(per), all_names, "dtypes=", name)
    else:  # one dtype (or a tuple) for every tensor argument
        per = {n: dtypes for n in all_names}
    cont = _names(contiguous, all_names, "contiguous=", name)
    out = []
    for n, (pos, is_list) in kinds.items():
        d = per.get(n)
        if d is not None:
            d = tuple(_dtype(torch, x) for x in (d if isinstance(d, (tuple, list, set, frozenset)) else (d,)))
        out.append(_Param(pos, n, d, n in cont, is_list))
    return out


def op(name: str, *, mutates_args: Iterable[str] | str = (), schema: str | None = None,
       fake: Callable | None = None, like: str | Sequence[str] | None = None,
       out_shape: Callable | None = None, dtypes=None, contiguous=True,
       backward: Callable | None = None, setup_context: Callable | None = None,
       vmap: Callable | None = None) -> Callable[[Callable], Op]:
    """Decorator: registers a function that launches nanocuda kernels as the torch op `name`.

    The function's type hints give the schema (or pass `schema="(Tensor x) -> Tensor"`);
    `mutates_args` names the tensors it writes. Output metadata for torch.compile comes from
    `fake=` (a torch.library fake function), or `like=` (outputs shaped like that input, one
    name or one per output) with an optional `out_shape=` (args -> shape or shapes).
    `dtypes=` (a dtype, or {arg: dtype(s)}) and `contiguous=` (True: every tensor, or names)
    are checked before the function runs. `backward=`/`setup_context=` register autograd,
    `vmap=` a batching rule. Launch on `torch_ops.stream(x)` to follow torch's stream.

    Example::

        @torch_ops.op("mylib::square", like="x", dtypes="float32")
        def square(x: torch.Tensor) -> torch.Tensor:
            out = torch.empty_like(x)
            mod.square[(x.numel() + 255) // 256, 256](x, out, x.numel(), stream=torch_ops.stream(x))
            return out
    """
    def wrap(fn: Callable) -> Op:
        torch = _torch()
        s = schema if schema is not None else torch.library.infer_schema(fn, mutates_args=mutates_args)
        mutated = [mutates_args] if isinstance(mutates_args, str) else list(mutates_args)
        result = Op(name, fn, schema=s, mutates_args=mutated, fake=fake, like=like,
                    out_shape=out_shape, dtypes=dtypes, contiguous=contiguous, backward=backward,
                    setup_context=setup_context, vmap=vmap)
        result.__doc__ = fn.__doc__
        result.__signature__ = inspect.signature(fn)
        return result

    return wrap


def op_from_kernel(kernel, name: str, schema: str, *, grid, block=256, shared_mem: int = 0,
                   args: Callable | None = None, like: str | Sequence[str] | None = None,
                   out_shape: Callable | None = None, dtypes=None, contiguous=True,
                   backward: Callable | None = None, setup_context: Callable | None = None,
                   vmap: Callable | None = None) -> Op:
    """One kernel as the torch op `name`, in one line; its outputs are allocated for it.

    `kernel`: a `nanocuda.load(...)` kernel (`mod.square`) or a nanocuda.Kernel. `schema`:
    the op's torch schema without the name, e.g. `"(Tensor x, float alpha) -> Tensor"`
    (`Tensor(a!) out` for an argument the kernel writes). Each returned tensor is allocated
    like the first tensor argument (`like=` picks others, `out_shape=` other shapes).
    `args(*inputs, *outputs)` gives the kernel's arguments (default: inputs then outputs);
    `grid` is an int/tuple or `grid(*inputs)`. The launch goes to torch's current stream on
    the inputs' device. Other keywords as in `op()`.

    Example::

        mod = nanocuda.load("square.cu")
        square = torch_ops.op_from_kernel(mod.square, "mylib::square", "(Tensor x) -> Tensor",
                                          grid=lambda x: (x.numel() + 255) // 256, block=256,
                                          args=lambda x, out: (x, out, x.numel()), dtypes="float32")
        y = square(torch.randn(1000, device="cuda"))
    """
    torch = _torch()
    if not isinstance(schema, str) or not schema.lstrip().startswith("("):
        raise ValueError(f"op_from_kernel {name}: schema must look like '(Tensor x) -> Tensor', got {schema!r}")
    try:
        parsed = torch._C.parse_schema("nanocuda_check::op" + schema)
    except RuntimeError as e:
        raise ValueError(f"op_from_kernel {name}: cannot parse schema {schema!r}: {e}") from None
    mutated = [a.name for a in parsed.arguments if a.alias_info is not None and a.alias_info.is_write]
    if any(str(r.type) != "Tensor" for r in parsed.returns):
        raise ValueError(f"op_from_kernel {name}: every output must be a Tensor, got {schema!r}")
    return KernelOp(kernel, name, schema, args=args, grid=grid, block=block, shared_mem=shared_mem,
                    mutates_args=mutated, like=like, out_shape=out_shape, dtypes=dtypes,
                    contiguous=contiguous, backward=backward, setup_context=setup_context, vmap=vmap)
