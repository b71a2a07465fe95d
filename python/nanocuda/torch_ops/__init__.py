"""nanocuda kernels as PyTorch operators (torch.library custom ops); imports torch only when used.

Two forms. A decorator on a function that launches nanocuda kernels::

    @torch_ops.op("mylib::scale", like="x", dtypes={"x": torch.float32})
    def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
        out = torch.empty_like(x)
        mod.scale[grid(x), 256](x, out, alpha, x.numel(), stream=torch_ops.stream(x))
        return out

and a shorthand for one kernel whose outputs are allocated like an input::

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
from collections.abc import Callable, Iterable, Sequence

from ._op import KernelOp, Op
from ._spec import _torch, stream

__all__ = ["KernelOp", "Op", "op", "op_from_kernel", "stream"]


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
