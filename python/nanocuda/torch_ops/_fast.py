"""The eager fast path of an Op: a `__call__` generated for the op's own parameters.

Why generated: a call from eager PyTorch should cost little more than the Launcher itself.
A generic `__call__(*args)` loops over parameter specs and indexes tuples; straight-line code
with the parameters as locals does the same checks in about half the time. The code only
decides *whether* the direct path applies and whether the tensors pass; anything unusual
(autograd needed, torch.compile tracing, dispatch/function modes, vmap, tensor subclasses)
goes to torch's dispatcher (`self.default`), and a failed check goes to `self._run`, which
runs the full checks and raises the precise error. Schemas with defaults, keyword-only
arguments, optional or list tensors keep the generic `Op.__call__`.
"""

from __future__ import annotations


def specialize(op) -> type | None:
    """A subclass of type(op) whose __call__ is generated for `op`, or None when not worth it."""
    torch = op._torch
    parsed = op._schema
    names = op._arg_names
    if not op._params or any(p.is_list or p.optional for p in op._params):
        return None
    if any(a.kwarg_only or a.default_value is not None for a in parsed.arguments):
        return None
    if not all(n.isidentifier() and n not in ("self", "d", "h", "key", "launcher") for n in names):
        return None
    C = torch._C
    scope = {
        # False in eager; Dynamo folds it to True while tracing (so graphs hold the op).
        # Cheaper than is_compiling(), which also asks torch.jit; exports pass fake tensors,
        # which the type test below sends to the dispatcher.
        "_compiling": torch.compiler.is_dynamo_compiling, "_stack": C._len_torch_dispatch_stack,
        "_functorch": C._are_functorch_transforms_active, "_tfmode": C._is_torch_function_mode_enabled,
        "_grad": C.is_grad_enabled, "_any_rg": getattr(C, "_any_requires_grad", None),
        "_T": torch.Tensor, "_P": torch.nn.Parameter,
        "_default": op.default,
    }
    args = ", ".join(names)
    tensors = [p.name for p in op._params]
    # get_device() >= 0 is a CUDA tensor here (the full check also turns away other
    # accelerators' tensors). A KernelOp leaves the other tensors' devices to the Launcher,
    # which checks each against the launch stream's device; its error is replaced by ours.
    bad = ["d < 0" if op._device_type == "cuda" else "d != -1"]
    if not op._launcher_checks_devices:
        bad += [f"{t}.get_device() != d" for t in tensors[1:]]
    # Tensors whose dtype and contiguity every Launcher of a KernelOp checks itself, on the
    # DLTensor it reads anyway (see KernelOp._learn_requires): nothing to ask torch here.
    in_launcher = getattr(op, "_launch_checked", frozenset())
    for p in op._params:
        if p.name in in_launcher:
            continue
        if p.dtypes is not None:
            if len(p.dtypes) == 1:
                scope[f"_dt_{p.name}"] = p.dtypes[0]
                bad.append(f"{p.name}.dtype is not _dt_{p.name}")
            else:
                scope[f"_dt_{p.name}"] = p.dtypes
                bad.append(f"{p.name}.dtype not in _dt_{p.name}")
        if p.contiguous:
            bad.append(f"not {p.name}.is_contiguous()")
    checks = [f"    d = {tensors[0]}.get_device()",
              f"    if {' or '.join(bad)}:",
              f"        return self._run(({args},), {{}})  # raises the precise error"]
    body = op._fast_body(names, scope)
    not_plain = " or ".join(f"(type({t}) is not _T and type({t}) is not _P)" for t in tensors)
    # One C call for all tensors (what torch's own custom-op autograd wrapper does), when
    # this torch has it; it ignores grad mode, hence _grad() first.
    grads = (f"_any_rg({', '.join(tensors)})" if scope["_any_rg"] is not None
             else " or ".join(f"{t}.requires_grad" for t in tensors))
    lines = [f"def __call__(self, {args}):",
             f"    if _compiling() or _stack() or _functorch() or _tfmode():",
             f"        return _default({args})",
             f"    if {not_plain} or (_grad() and ({grads})):",
             f"        return _default({args})",
             *checks, *body, "",
             # The dispatcher's entry (torch.ops calls, compiled graphs): already past
             # autograd and modes, with plain tensors.
             f"def _direct(self, {args}):",
             *checks, *body]
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<nanocuda op {op.name}>", "exec"), scope)  # noqa: S102
    call = scope["__call__"]
    call.__doc__ = type(op).__call__.__doc__
    cls = type(type(op).__name__, (type(op),), {"__call__": call, "_direct": scope["_direct"],
                                           "_fast_source": source, "_fast_scope": scope})
    cls.__module__ = type(op).__module__
    cls.__qualname__ = type(op).__qualname__
    return cls
