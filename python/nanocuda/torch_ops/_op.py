"""torch_ops.Op: a torch.library custom op around a launch function, with its checks and
the eager path that skips torch's dispatcher; KernelOp: one kernel with allocated outputs."""

from __future__ import annotations

from collections.abc import Callable

from . import _fast, _spec
from ._spec import (_NAME, _VERIFY_CALLS, _Outputs, _describe, _exists, _label, _registered,
                    _stream_on, _tensor_params, _torch, _where)


class Op:
    """A nanocuda-backed torch operator. Call it like a function; `Op.default` is the
    OpOverload (`torch.ops.ns.name.default`) that torch.compile records in its graphs.

    In plain eager calls (no autograd needed, no torch.compile tracing, no dispatch or
    function mode, no vmap, plain tensors) the call skips torch's dispatcher and runs the
    checked launch directly: the same code the dispatcher would reach, without its ~5-20 µs.
    """

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
        self._torch = torch
        self._device_type = _spec.device_type  # "cuda"; CPU-only tests of the plumbing set "cpu"
        self._schema = parsed = torch._C.parse_schema(name + schema)
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
        self._specialize()
        _spec._ops.add(self)

    def _release(self) -> None:
        """Drops the launch function and kernels (at exit; the op cannot run afterwards)."""
        self._fn = None
        self.__dict__.pop("_kernel", None)
        self.__dict__.get("_launchers", {}).clear()
        for name in ("_fn", "_args", "_grid"):  # the generated __call__'s globals
            type(self).__dict__.get("_fast_scope", {}).pop(name, None)

    def _specialize(self) -> None:
        fast = _fast.specialize(self)
        if fast is not None:
            self.__class__ = fast

    def _fast_body(self, names: list[str], scope: dict) -> list[str]:
        """The generated __call__'s last lines, once the checks passed (see _fast)."""
        args = ", ".join(names)
        scope["_fn"] = self._fn
        lines = [f"    if self._verify_left:",
                 f"        return self._run(({args},), {{}})"] if self._verify_left else []
        return lines + [f"    return _fn({args})"]

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

    _launcher_checks_devices = False  # KernelOp: every tensor goes to a Launcher, which checks

    def _run_dispatched(self, *args, **kwargs):
        direct = self._direct
        if direct is None or kwargs:
            return self._run(args, kwargs)
        return direct(*args)

    _direct = None  # the generated dispatcher entry (see _fast), when the schema allows one

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

    _launcher_checks_devices = True

    def __init__(self, kernel, name, schema, *, args, grid, block, shared_mem, **options):
        self._kernel = getattr(kernel, "kernel", kernel)  # a workflow KernelFunction or a Kernel
        self._args = args
        self._grid, self._block, self._shared_mem = grid, block, shared_mem
        self._launchers: dict = {}  # (stream handle or ~device, grid) -> Launcher on that stream
        # kernel parameter -> (DLPack dtype codes, contiguous) that every Launcher checks, and
        # the op parameters thereby checked (see _learn_requires); None until a call showed it.
        self._launch_requires: dict | None = None
        self._launch_checked = frozenset()
        super().__init__(name, self._launch_unused, schema=schema, **options)

    def _specialize(self) -> None:
        if self._n_out and self._outputs is None:
            self._outputs = _Outputs(self, None, None)  # like the first tensor input
        self._verify_left = 0  # outputs come from the spec itself: nothing to compare
        super()._specialize()

    def _launch_unused(self, *args, **kwargs):  # the body is _run below
        raise AssertionError("unreachable")

    def _run(self, args, kwargs):
        if kwargs:
            args = (*args, *(kwargs[n] for n in self._arg_names[len(args):]))
        device = self._check(args, {})
        outs = self._outputs.make(args, {}) if self._outputs is not None else []
        grid = self._grid(*args) if callable(self._grid) else self._grid
        launcher = self._launchers.get((self._torch._C._cuda_getCurrentRawStream(device) or ~device, grid))
        if launcher is None:
            launcher = self._bind(device, grid, (*args, *outs))
        launcher(*(self._args(*args, *outs) if self._args is not None else (*args, *outs)))
        if not outs:
            return None
        return outs[0] if self._n_out == 1 else tuple(outs)

    def _bind(self, device, grid, values=None):
        """A Launcher for this grid on torch's current stream of `device` (cached). `values`:
        the call's arguments and outputs, from which the first bind learns where each tensor
        goes among the kernel's parameters (see _learn_requires)."""
        import nanocuda

        if len(self._launchers) > 256:  # many distinct grids or streams: start over
            self._launchers.clear()
        key = (self._torch._C._cuda_getCurrentRawStream(device) or ~device, grid)
        if 0 in (grid if isinstance(grid, tuple) else (grid,)):
            launcher = _launch_nothing  # empty tensors: a zero grid has no work (and is invalid)
        else:
            config = nanocuda.LaunchConfig(grid=grid, block=self._block, shared_mem=self._shared_mem)
            launcher = self._kernel.bind(config, stream=_stream_on(device))
            if self._launch_requires is None and values is not None:
                self._learn_requires(values, launcher)
            else:
                for index, (codes, contiguous) in (self._launch_requires or {}).items():
                    nanocuda._nanocuda._internal.launcher_require(launcher, index, codes, contiguous)
        self._launchers[key] = launcher
        return launcher

    def _learn_requires(self, values, launcher) -> None:
        """Moves the dtype/contiguity checks of tensors that reach the kernel as themselves
        into the Launchers: they read each tensor's DLTensor anyway, where the generated
        __call__ paid a torch attribute read or method call per check (~30% of the op's
        own cost). Only for a tensor found at exactly one kernel parameter (by identity) and
        dtypes with a DLPack code here; the args function must keep each tensor at its
        parameter from call to call. Regenerates __call__ without those checks."""
        try:
            kernel_args = self._args(*values) if self._args is not None else values
        except Exception:  # noqa: BLE001 - raised again by the launch, where the op reports it
            return
        requires, checked = {}, set()
        for p in self._params:
            if p.is_list or p.optional or p.pos >= len(values):
                continue
            t = values[p.pos]
            at = [j for j, v in enumerate(kernel_args) if v is t]
            codes = [_dlpack_codes(self._torch).get(dt) for dt in (p.dtypes or ())]
            if len(at) != 1 or at[0] in requires or None in codes or len(codes) > 4:
                continue
            if any(values[q.pos] is t for q in self._params if q is not p and q.pos < len(values)):
                continue  # one tensor passed for two parameters: whose checks would apply?
            if p.dtypes is None and not p.contiguous:
                continue
            requires[at[0]] = (codes, bool(p.contiguous))
            checked.add(p.name)
        import nanocuda

        try:  # also on Launchers made before the mapping was known
            for each in (launcher, *(x for x in self._launchers.values() if x is not _launch_nothing)):
                for index, (codes, contiguous) in requires.items():
                    nanocuda._nanocuda._internal.launcher_require(each, index, codes, contiguous)
        except ValueError:  # more arguments than the kernel has: the launch itself will say so
            requires, checked = {}, set()
            for each in (launcher, *(x for x in self._launchers.values() if x is not _launch_nothing)):
                for index in range(len(kernel_args)):
                    try:
                        nanocuda._nanocuda._internal.launcher_require(each, index, [], False)
                    except ValueError:
                        break
        self._launch_requires = requires
        if checked:
            self._launch_checked = frozenset(checked)
            self.__class__ = type(self).__mro__[1] if "_fast_source" in type(self).__dict__ else type(self)
            self._specialize()

    def _fast_body(self, names: list[str], scope: dict) -> list[str] | None:
        args = ", ".join(names)
        lines, outs = [], []
        if self._outputs is not None:
            outs = [f"o{i}" for i in range(self._n_out)]
            if self._outputs.out_shape is None:
                scope["_empty_like"], scope["_cf"] = self._torch.empty_like, self._torch.contiguous_format
                contiguous = {p.name for p in self._params if p.contiguous}
                for o, pos in zip(outs, self._outputs.positions):
                    src = names[pos]  # a contiguous input: empty_like keeps its (dense) layout
                    lines.append(f"    {o} = _empty_like({src})" if src in contiguous
                                 else f"    {o} = _empty_like({src}, memory_format=_cf)")
            else:
                lines.append(f"    {', '.join(outs)}, = self._outputs.make(({args},), {{}})")
        if callable(self._grid):
            scope["_grid"] = self._grid
            lines.append(f"    grid = _grid({args})")
        else:
            scope["grid"] = self._grid
        scope["_raw"] = self._torch._C._cuda_getCurrentRawStream
        scope["_launchers"] = self._launchers
        values = ", ".join([*names, *outs])
        lines += ["    launcher = _launchers.get((_raw(d) or ~d, grid))",
                  "    if launcher is None:",
                  f"        launcher = self._bind(d, grid, ({values},))"]
        call = f"launcher(*_args({values}))" if self._args is not None else f"launcher({values})"
        scope["_args"] = self._args
        lines += ["    try:",
                  f"        {call}",
                  "    except (TypeError, ValueError):",
                  f"        self._check(({args},), {{}})  # names the op's argument, if one is to blame",
                  "        raise"]
        if not outs:
            lines.append("    return None")
        else:
            lines.append(f"    return {outs[0] if len(outs) == 1 else '(' + ', '.join(outs) + ')'}")
        return lines


def _launch_nothing(*args) -> None:
    return None


_codes: dict = {}
# The dtypes whose DLPack code torch's export is certain to use (others keep their check in Python).
_CERTAIN = frozenset(("int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64", "bfloat16"))


def _dlpack_codes(torch) -> dict:
    """torch dtype -> DLPack code | bits << 8 | lanes << 16, read from the core's dtype table."""
    if not _codes:
        from .._nanocuda import _internal

        for name, code, bits, lanes, _typestr in _internal.dtype_table():
            if name in _CERTAIN:
                _codes[getattr(torch, name)] = code | bits << 8 | lanes << 16
    return _codes
