"""nanocuda kernels as JAX operations (XLA custom calls through jax.ffi); imports JAX only when used.

A one-liner from one kernel, whose output is allocated by XLA:

    mod = nanocuda.load("square.cu")
    square = mod.square.as_jax_op("square", grid=lambda x: (x.size + 255) // 256, block=256,
                                  args=lambda x, out: (x, out, x.size), dtypes="float32")
    y = jax.jit(square)(x)

and a decorator for a function of several launches (`jax_ops.launch`) and outputs:

    @jax_ops.op("bias_gelu", dtypes="float32", backward=bias_gelu_backward)
    def bias_gelu(x, b):
        o = jax.ShapeDtypeStruct(x.shape, x.dtype)
        return jax_ops.launch(mod.bias_gelu, lambda o: (x, b, o, x.size, b.size), out=o,
                              grid=(x.size + 255) // 256)

Each launch is one custom call (`nanocuda_launch`) in the lowered program, run on XLA's CUDA
stream by a small C++ handler built once against the installed jaxlib (`build()`). The kernel,
launch shape and packed scalars are static attributes, checked at trace time with nanocuda's
launch rules; arrays are positional, static values keywords (`scale(x, alpha=2.0)`).
"""

from __future__ import annotations

from collections.abc import Callable

from ._ffi import build, build_directory
from ._op import KernelOp, Op, launch

__all__ = ["KernelOp", "Op", "build", "build_directory", "launch", "op", "op_from_kernel"]


def op(name: str, *, inputs=None, dtypes=None, ndim=None, backward: Callable | None = None,
       vmap: str | None = None) -> Callable[[Callable], Op]:
    """Decorator: a function that calls `jax_ops.launch` (any number of times) as the op `name`.

    Its positional parameters without defaults are the array inputs (`inputs=` names them
    otherwise); keyword-only and defaulted parameters are static attributes (pass them by
    keyword; they key the op's trace cache, so use hashable values). `dtypes=` (a dtype, or {input: dtype(s)}) and `ndim=`
    (a rank, or {input: rank(s)}) are checked at trace time. `backward(inputs, outputs,
    cotangent, **attrs)` returns one cotangent per array input (a jax.custom_vjp).
    `vmap="rebatch"`: under jax.vmap the function runs once on the batched arrays (batch
    axis first), for kernels that take any leading dimensions.
    """
    def wrap(fn: Callable) -> Op:
        result = Op(name, fn, inputs=inputs, dtypes=dtypes, ndim=ndim, backward=backward, vmap=vmap)
        result.__doc__ = fn.__doc__
        return result

    return wrap


def op_from_kernel(kernel, name: str, *, grid, block=256, shared_mem: int = 0,
                   args: Callable | None = None, out=None, inplace=None, inputs=None, dtypes=None,
                   ndim=None, backward: Callable | None = None, vmap_method: str | None = None) -> KernelOp:
    """One kernel as the JAX op `name`, in one line (also `mod.kernel.as_jax_op(name, ...)`).

    `grid`/`block`: ints/tuples or functions of the inputs (`grid(*arrays, **attrs)`).
    `out`: the output(s) as jax.ShapeDtypeStruct, or a function of the inputs returning them
    (default: one output like the first input). `inplace=`: input name(s) the kernel writes;
    they are aliased to outputs (input_output_aliases: XLA copies them unless they are
    donated, `jax.jit(f, donate_argnums=...)`) and returned first. `args(*arrays,
    *outputs, **attrs)`: the kernel's arguments (default: inputs, then outputs).
    `vmap_method`: "sequential" (jax.ffi's: one launch per example) or "rebatch" (one launch
    over the whole batch, grid and scalars from the batched shapes); jax.ffi's
    "expand_dims"/"broadcast_all" are refused: they would keep one example's grid and sizes.
    Other keywords as in `op()`.
    """
    return KernelOp(kernel, name, grid=grid, block=block, shared_mem=shared_mem, args=args, out=out,
                    inplace=inplace, vmap_method=vmap_method, inputs=inputs, dtypes=dtypes, ndim=ndim,
                    backward=backward)
