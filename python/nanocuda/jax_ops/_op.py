"""jax_ops.Op: a function of nanocuda launches as a JAX operation, with its trace-time
checks, optional derivative (custom_vjp) and batching (custom_vmap); launch(): one kernel."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from . import _ffi
from ._spec import _jax, dtype_set, is_array, pack_launch, shape_structs

VMAP_METHODS = ("sequential", "rebatch")
# jax.ffi's other methods run the call once on the batched arrays with the attributes traced
# for one example: the grid and sizes packed then would cover one example only.
_WRONG_FOR_KERNELS = ("expand_dims", "broadcast_all")


def launch(kernel, args, *, out, grid, block=256, shared_mem: int = 0, vmap_method: str | None = None,
           name: str | None = None):
    """Launches `kernel` as one XLA custom call on XLA's CUDA stream; returns its output(s).

    `out`: a jax.ShapeDtypeStruct, or an input array the kernel writes in place (aliased to
    that output: `input_output_aliases`), or a sequence of them. `args`: the kernel's
    arguments, or a function of the outputs returning them; arrays among them (inputs and
    the `out` entries, matched by identity) are passed as device pointers, everything else
    is packed by nanocuda's launch rules against the kernel's parameters, at trace time.
    `vmap_method="sequential"`: jax.vmap runs it once per example (for one launch over the
    batch, make the function an op with `vmap="rebatch"`). Use it inside a function decorated
    with `jax_ops.op`, or directly.
    """
    jax = _jax()
    label = name or getattr(kernel, "name", "launch")
    single = not isinstance(out, (tuple, list))
    outs = shape_structs(out, f"jax_ops {label}: out=")
    values = args(*outs) if callable(args) else args
    if not isinstance(values, (tuple, list)):
        raise TypeError(f"jax_ops {label}: the kernel arguments must be a tuple or list, got {values!r}")
    values = [jax.numpy.asarray(v) if isinstance(v, np.ndarray) and v.ndim else v for v in values]
    packed = pack_launch(label, kernel, values, outs, grid, block, shared_mem)
    results = [jax.ShapeDtypeStruct(o.shape, o.dtype) for o in outs]
    if packed.empty:  # a zero grid: nothing to launch (and cuLaunchKernel would refuse it)
        got = [o if is_array(o) else jax.numpy.zeros(o.shape, o.dtype) for o in outs]
    else:
        _check_vmap_method(label, vmap_method, ("sequential",))
        _ffi.ensure_registered()
        call = jax.ffi.ffi_call(_ffi.TARGET, results, vmap_method=vmap_method,
                                input_output_aliases=packed.aliases or None)
        got = call(*packed.inputs, **packed.attributes)
    return got[0] if single else tuple(got)


class Op:
    """A nanocuda-backed JAX operation: call it with arrays (positional) and static
    attributes (keywords). Works under jax.jit, jax.grad (with `backward=`), jax.vmap and
    inside lax.scan/while_loop; each launch is one custom call in the lowered program."""

    def __init__(self, name: str, fn: Callable, *, inputs=None, dtypes=None, ndim=None,
                 backward: Callable | None = None, vmap: str | None = None):
        if not isinstance(name, str) or not name:
            raise ValueError(f"jax_ops: an op needs a name, got {name!r}")
        self.name, self._fn = name, fn
        self._inputs = _input_names(name, fn, inputs)
        self._dtypes = self._per_input(dtypes, "dtypes=", lambda d, w: dtype_set(d, w))
        self._ndim = self._per_input(ndim, "ndim=", _ndim_set)
        if vmap is not None and vmap != "rebatch":
            raise ValueError(f"jax_ops {name}: vmap= takes 'rebatch' (call the op again on the "
                             f"batched arrays); jax.ffi's methods go to vmap_method=, got {vmap!r}")
        self._backward, self._vmap = backward, vmap
        self._cache: dict = {}

    def _per_input(self, value, what, convert) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            if self._inputs is None:
                return {"*": convert(value, f"jax_ops {self.name}: {what}")}
            value = {n: value for n in self._inputs}
        names = self._inputs or []
        for n in value:
            if n not in names:
                raise ValueError(f"jax_ops {self.name}: {what} names {n!r}, which is not an input "
                                 f"(inputs: {', '.join(names) or 'unnamed: pass inputs='})")
        return {n: convert(v, f"jax_ops {self.name}: {what}[{n!r}]") for n, v in value.items()}

    # -- calls ----------------------------------------------------------------------------------
    def __call__(self, *arrays, **attrs):
        jax = _jax()
        arrays = tuple(jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays)
        self._check(arrays)
        return self._function(attrs)(*arrays)

    def _label(self, i: int) -> str:
        return f"argument {i} ({self._inputs[i]!r})" if self._inputs else f"argument {i}"

    def _check(self, arrays) -> None:
        if self._inputs is not None and len(arrays) != len(self._inputs):
            raise TypeError(f"jax_ops {self.name}: takes {len(self._inputs)} array argument(s) "
                            f"({', '.join(self._inputs)}), got {len(arrays)}")
        for i, a in enumerate(arrays):
            if not is_array(a):
                raise TypeError(f"jax_ops {self.name}: {self._label(i)} must be an array, got "
                                f"{type(a).__name__} {a!r}; pass static values as keywords")
            key = self._inputs[i] if self._inputs else "*"
            want = self._dtypes.get(key)
            if want is not None and np.dtype(a.dtype) not in want:
                raise TypeError(f"jax_ops {self.name}: {self._label(i)} is {a.dtype}{list(a.shape)}; the "
                                f"kernel was compiled for {' or '.join(str(d) for d in want)}")
            ranks = self._ndim.get(key)
            if ranks is not None and a.ndim not in ranks:
                raise ValueError(f"jax_ops {self.name}: {self._label(i)} has rank {a.ndim} (shape "
                                 f"{tuple(a.shape)}); the op takes rank {' or '.join(map(str, ranks))}")

    def _function(self, attrs: dict):
        try:
            key = tuple(sorted(attrs.items()))
            hash(key)
        except TypeError:
            return self._build(attrs)
        f = self._cache.get(key)
        if f is None:
            f = self._cache[key] = self._build(attrs)
        return f

    def _build(self, attrs: dict):
        jax = _jax()
        fn, name = self._fn, self.name

        def body(*xs):
            return fn(*xs, **attrs)

        f = body
        if self._vmap == "rebatch":
            f = jax.custom_batching.custom_vmap(body)

            @f.def_vmap
            def rule(axis_size, in_batched, *xs):
                # Batch axis first on every input (broadcast where unbatched), then the same
                # launches on the whole batch: grid and scalars follow the batched shapes.
                moved = [x if b else jax.numpy.broadcast_to(x, (axis_size, *x.shape))
                         for x, b in zip(xs, in_batched)]
                out = body(*moved)
                return out, jax.tree_util.tree_map(lambda _: True, out)

        if self._backward is None:
            return f
        backward, inner = self._backward, f
        g = jax.custom_vjp(lambda *xs: inner(*xs))

        def fwd(*xs):
            out = inner(*xs)
            return out, (xs, out)

        def bwd(res, cotangent):
            xs, out = res
            grads = backward(xs, out, cotangent, **attrs)
            grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
            if len(grads) != len(xs):
                raise ValueError(f"jax_ops {name}: backward returned {len(grads)} cotangent(s) for "
                                 f"{len(xs)} input(s); return one per array input (None for none)")
            return tuple(jax.numpy.zeros_like(x) if g is None else g for x, g in zip(xs, grads))

        g.defvjp(fwd, bwd)
        return g

    def __repr__(self) -> str:
        return f"<nanocuda jax op {self.name}>"


def _check_vmap_method(name: str, method, allowed) -> None:
    if method is None or method in allowed:
        return
    if method in _WRONG_FOR_KERNELS:
        raise ValueError(f"jax_ops {name}: vmap_method={method!r} would launch once on the batched arrays "
                         f"with the grid and scalars traced for one example; use 'rebatch' (the op is "
                         f"traced again on the batched shapes) or 'sequential'")
    raise ValueError(f"jax_ops {name}: vmap_method must be one of {allowed}, got {method!r}")


def _ndim_set(value, what: str) -> tuple[int, ...]:
    many = value if isinstance(value, (tuple, list, set, frozenset)) else (value,)
    if not all(isinstance(r, int) and not isinstance(r, bool) and r >= 0 for r in many):
        raise TypeError(f"{what}: expected a rank (int) or several, got {value!r}")
    return tuple(many)


def _input_names(name, fn, inputs):
    if inputs is not None:
        names = [s.strip() for s in inputs.split(",")] if isinstance(inputs, str) else list(inputs)
        if not all(isinstance(n, str) and n.isidentifier() for n in names) or len(set(names)) != len(names):
            raise ValueError(f"jax_ops {name}: inputs= must name each array argument once, got {inputs!r}")
        return names
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return None
    # Positional parameters without a default are the arrays; the rest are static attributes.
    return [p.name for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]


class KernelOp(Op):
    """An Op that launches one kernel (jax_ops.op_from_kernel / mod.k.as_jax_op)."""

    def __init__(self, kernel, name, *, grid, block, shared_mem, args, out, inplace, vmap_method,
                 **options):
        self.kernel = kernel
        self._grid, self._block, self._shared_mem = grid, block, shared_mem
        self._args, self._out, self._vmap_method = args, out, vmap_method
        _check_vmap_method(name, vmap_method, VMAP_METHODS)
        if vmap_method == "rebatch":
            options["vmap"] = "rebatch"
        super().__init__(name, self._launch, **options)
        names = self._inputs or []
        inplace = [inplace] if isinstance(inplace, (str, int)) else list(inplace or ())
        for n in inplace:
            if not (n in names or isinstance(n, int)):
                raise ValueError(f"jax_ops {name}: inplace= names {n!r}, which is not an input "
                                 f"(inputs: {', '.join(names) or 'none'})")
        self._inplace = [names.index(n) if isinstance(n, str) else n for n in inplace]

    def _outputs(self, xs, attrs) -> list:
        outs = [xs[i] for i in self._inplace]
        if self._out is not None:
            spec = self._out(*xs, **attrs) if callable(self._out) else self._out
            outs += shape_structs(spec, f"jax_ops {self.name}: the out function")
        elif not outs:
            if not xs:
                raise ValueError(f"jax_ops {self.name}: no input to allocate the output like; give out=")
            outs = [_jax().ShapeDtypeStruct(xs[0].shape, xs[0].dtype)]
        return outs

    def _launch(self, *xs, **attrs):
        outs = self._outputs(xs, attrs)
        grid = self._grid(*xs, **attrs) if callable(self._grid) else self._grid
        block = self._block(*xs, **attrs) if callable(self._block) else self._block
        if self._args is None:
            values = (*xs, *[o for o in outs if not any(o is x for x in xs)])
        else:
            values = self._args(*xs, *outs, **attrs)
        method = None if self._vmap_method == "rebatch" else self._vmap_method
        return launch(self.kernel, values, out=outs if len(outs) > 1 else outs[0], grid=grid, block=block,
                      shared_mem=self._shared_mem, vmap_method=method, name=self.name)
