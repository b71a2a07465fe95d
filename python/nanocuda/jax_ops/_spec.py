"""jax_ops helpers: the JAX import, dtype and shape specs, and one launch's checked packing."""

from __future__ import annotations

import sys

import numpy as np

_MAX_PARAM_BYTES = 4096  # the handler's parameter buffer (_jax_ffi/handler.cpp: kMaxParamBytes)
_kept: dict[int, object] = {}  # kernel handle -> kernel: compiled XLA programs hold the handle


def _jax():
    jax = sys.modules.get("jax")
    if jax is None:
        try:
            import jax
        except ImportError as e:
            raise ImportError("nanocuda.jax_ops needs JAX (pip install jax)") from e
    import jax.ffi  # noqa: F401 - older layouts do not import the submodule with jax

    return jax


def is_array(v) -> bool:
    """A JAX array or tracer (anything JAX traces as an array), or a numpy array."""
    return isinstance(v, (_jax().Array, np.ndarray))  # tracers are jax.Array instances


def dtype_set(d, what: str) -> tuple:
    """One dtype, its name, or several, as numpy dtypes."""
    many = d if isinstance(d, (tuple, list, set, frozenset)) else (d,)
    out = []
    for x in many:
        try:
            out.append(np.dtype(x))
        except TypeError:
            raise TypeError(f"{what}: {x!r} is not a dtype (expected e.g. 'float32' or jnp.float32)") from None
    return tuple(out)


def _dims(value, what: str) -> tuple[int, int, int]:
    v = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(v) <= 3 or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in v):
        raise ValueError(f"{what} must be an int or a tuple of 1-3 ints, got {value!r}")
    if any(d < 0 for d in v):
        raise ValueError(f"{what} must not be negative, got {value!r}")
    return tuple(int(d) for d in v) + (1,) * (3 - len(v))


def shape_structs(value, what: str, count: int | None = None) -> list:
    """A ShapeDtypeStruct (or anything with .shape and .dtype) or a sequence of them."""
    jax = _jax()

    def one(v):
        return (hasattr(v, "shape") and hasattr(v, "dtype") and isinstance(v.shape, tuple)
                and all(isinstance(d, (int, np.integer)) and d >= 0 for d in v.shape))

    many = [value] if one(value) else value
    if not isinstance(many, (tuple, list)) or not many or not all(map(one, many)) or (
            count is not None and len(many) != count):
        want = "a jax.ShapeDtypeStruct (or an input array) or a non-empty sequence of them"
        if count is not None:
            want = f"{count} output spec(s) ({want})"
        raise ValueError(f"{what} returned {value!r}; expected {want}")
    # The same objects where they are specs already: launches find outputs by identity, so a
    # spec given for several outputs (`out=(o, o)`) becomes one object per output.
    specs, seen = [], set()
    for v in many:
        if not is_array(v) and (not isinstance(v, jax.ShapeDtypeStruct) or id(v) in seen):
            v = jax.ShapeDtypeStruct(tuple(int(d) for d in v.shape), v.dtype)
        seen.add(id(v))
        specs.append(v)
    return specs


def kernel_of(kernel):
    """The nanocuda.Kernel behind a CudaModule attribute (`mod.square`) or a Kernel itself."""
    k = getattr(kernel, "kernel", kernel)
    for attr in ("handle", "param_layout", "name"):
        if not hasattr(k, attr):
            raise TypeError(f"jax_ops: expected a nanocuda kernel (mod.square or a nanocuda.Kernel), "
                            f"got {kernel!r}")
    return k


class Packed:
    """One launch, checked and packed at trace time: what the FFI handler needs as attributes."""

    __slots__ = ("inputs", "outputs", "aliases", "attributes", "empty")

    def __init__(self, inputs, outputs, aliases, attributes, empty):
        self.inputs, self.outputs, self.aliases = inputs, outputs, aliases
        self.attributes, self.empty = attributes, empty


def pack_launch(op_name: str, kernel, values, outs, grid, block, shared_mem) -> Packed:
    """Checks a launch against the kernel's parameters and packs its scalars with nanocuda's
    launch-path packer (the rules and errors of a plain launch). Arrays among `values` become
    the custom call's operands (each distinct array once, in order of first use); `outs`
    entries are results, an input array among them a result aliased to that input."""
    from .. import _nanocuda

    k = kernel_of(kernel)
    layout = [tuple(p) for p in k.param_layout]
    grid3 = _dims(grid, f"jax_ops {op_name}: grid")
    block3 = _dims(block, f"jax_ops {op_name}: block")
    if not isinstance(shared_mem, (int, np.integer)) or shared_mem < 0:
        raise ValueError(f"jax_ops {op_name}: shared_mem must be a non-negative int, got {shared_mem!r}")
    if 0 in block3:
        raise ValueError(f"jax_ops {op_name}: block must be positive, got {block!r}")
    if 0 not in grid3:  # nanocuda's launch-shape rules (a zero grid launches nothing)
        import nanocuda

        try:
            nanocuda.LaunchConfig(grid=grid3, block=block3, shared_mem=int(shared_mem))
        except (TypeError, ValueError) as e:
            raise ValueError(f"jax_ops {op_name}: {e}") from None
    values = list(values)
    if len(values) != len(layout):
        raise TypeError(f"jax_ops {op_name}: kernel {k.name!r} takes {len(layout)} arguments, the args "
                        f"function gave {len(values)}")
    out_ids = {id(o): j for j, o in enumerate(outs)}
    inputs: list = []
    input_ids: dict[int, int] = {}
    aliases: dict[int, int] = {}
    for j, o in enumerate(outs):  # an input array as an output: written in place
        if is_array(o):
            if id(o) not in input_ids:
                input_ids[id(o)] = len(inputs)
                inputs.append(o)
            aliases[input_ids[id(o)]] = j
    slots: list[int] = []  # (buffer, byte offset) pairs; buffers: inputs, then outputs
    to_pack = []
    for i, v in enumerate(values):
        buffer = None
        if id(v) in out_ids and not is_array(outs[out_ids[id(v)]]):
            buffer = ("output", out_ids[id(v)])
        elif is_array(v):
            if id(v) not in input_ids:
                input_ids[id(v)] = len(inputs)
                inputs.append(v)
            buffer = ("input", input_ids[id(v)])
        if buffer is None:
            to_pack.append(v)
            continue
        if layout[i][1] != 8:
            raise TypeError(f"jax_ops {op_name}: kernel argument {i} is an array but parameter {i} of "
                            f"{k.name!r} is {layout[i][1]} bytes, not a pointer")
        slots.append(buffer)
        slots.append(layout[i][0])
        to_pack.append(0)  # the address is patched in by the handler
    for j, o in enumerate(outs):
        if not is_array(o) and ("output", j) not in slots:
            raise ValueError(f"jax_ops {op_name}: output {j} is not among the kernel's arguments, so the "
                             f"kernel could never write it; pass it (the args function receives it)")
    total = max((o + s for o, s in layout), default=0)
    if total > _MAX_PARAM_BYTES:
        raise ValueError(f"jax_ops {op_name}: kernel {k.name!r} has {total} bytes of parameters; jax_ops "
                         f"launches take at most {_MAX_PARAM_BYTES}")
    try:
        blob = _nanocuda._internal.pack_params(layout, k.name, *to_pack)
    except (TypeError, ValueError, OverflowError) as e:
        raise type(e)(f"jax_ops {op_name}: {e}") from None
    slots = [x if not isinstance(x, tuple) else x[1] + (len(inputs) if x[0] == "output" else 0)
             for x in slots]
    words = np.zeros(max(1, (len(blob) + 7) // 8), dtype=np.int64)
    words.view(np.uint8)[:len(blob)] = np.frombuffer(blob, dtype=np.uint8)
    _kept.setdefault(int(k.handle), k)
    attributes = dict(kernel=np.int64(k.handle),
                      dims=np.array([*grid3, *block3, int(shared_mem)], dtype=np.int64),
                      slots=np.array(slots, dtype=np.int64), params=words, param_bytes=np.int64(len(blob)))
    return Packed(inputs, list(outs), aliases, attributes, 0 in grid3)
