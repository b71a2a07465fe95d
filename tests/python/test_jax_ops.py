"""nanocuda.jax_ops without a GPU: import hygiene, the FFI handler's build against jaxlib's
headers, trace-time checks and packing, and the programs lowered for CUDA (one custom call
per launch, aliases, grad, vmap, scan), with stand-in kernels that carry a parameter layout."""

import os
import struct
import subprocess
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # on a GPU machine, leave torch room

import numpy as np  # noqa: E402
import pytest  # noqa: E402

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None

needs_jax = pytest.mark.skipif(jax is None, reason="needs JAX (not installed)")


class FakeKernel:
    """What jax_ops reads of a nanocuda.Kernel: name, handle and parameter layout (no GPU)."""

    def __init__(self, name, layout, handle=0x7F00_1234_5000):
        self.name, self.param_layout, self.handle = name, layout, handle


SQUARE = FakeKernel("square", [(0, 8), (8, 8), (16, 4)])           # (const float*, float*, int)
SCALE = FakeKernel("scale", [(0, 8), (8, 8), (16, 4), (20, 4)], 0x7F00_2000)  # (x, out, float, int)
ADD_INPLACE = FakeKernel("add_inplace", [(0, 8), (8, 8), (16, 4)], 0x7F00_3000)  # (float* y, const float* x, n)


def lowered(f, *args):
    return jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",)).as_text()


def custom_calls(text):
    return [line for line in text.splitlines() if "stablehlo.custom_call @nanocuda_launch" in line]


def square_op(**kw):
    from nanocuda import jax_ops

    return jax_ops.op_from_kernel(SQUARE, "square", grid=lambda x: (x.size + 255) // 256, block=256,
                                  args=lambda x, out: (x, out, x.size), dtypes="float32", **kw)


def test_import_nanocuda_and_jax_ops_does_not_import_jax():
    code = "import sys, nanocuda, nanocuda.jax_ops; assert 'jax' not in sys.modules, 'jax imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.skipif(jax is not None, reason="checks the error when JAX is absent")
def test_without_jax_says_so():
    from nanocuda import jax_ops

    with pytest.raises(ImportError, match="needs JAX"):
        jax_ops.launch(SQUARE, (), out=None, grid=1)


@needs_jax
def test_handler_builds_against_jaxlib_headers_and_is_cached():
    import ctypes
    import os

    from nanocuda import jax_ops
    from nanocuda.jax_ops import _ffi

    path = jax_ops.build()
    assert os.path.isfile(path) and path.startswith(jax_ops.build_directory())
    assert os.stat(path).st_uid == os.getuid() and not os.stat(jax_ops.build_directory()).st_mode & 0o022
    assert hasattr(ctypes.CDLL(path), "NanocudaJaxLaunch")
    mtime = os.stat(path).st_mtime_ns
    assert jax_ops.build() == path and os.stat(path).st_mtime_ns == mtime  # cached: not rebuilt
    _ffi.ensure_registered()  # registers for the CUDA platform (no GPU needed to register)
    assert _ffi._registered


def pack_only(packed):
    """Runs the handler's packing on the CPU: the bytes it would give cuLaunchKernel."""
    from nanocuda.jax_ops import _ffi

    target = _ffi.register_pack_only()
    n = int(packed.attributes["param_bytes"])
    results = [jax.ShapeDtypeStruct(o.shape, o.dtype) for o in packed.outputs]
    cpu = jax.devices("cpu")[0]  # the twin is registered for the CPU platform, also beside a GPU
    with jax.default_device(cpu):
        inputs = [jax.device_put(a, cpu) for a in packed.inputs]
        got = jax.ffi.ffi_call(target, [*results, jax.ShapeDtypeStruct((n,), jnp.uint8)],
                               input_output_aliases=packed.aliases or None)(*inputs, **packed.attributes)
    return bytes(np.asarray(got[-1]))


@needs_jax
def test_handler_patches_buffer_addresses_into_the_packed_bytes():
    from nanocuda.jax_ops._spec import pack_launch

    x = jnp.arange(10, dtype=jnp.float32)
    o = jax.ShapeDtypeStruct((10,), jnp.float32)
    blob = pack_only(pack_launch("scale", SCALE, (x, o, 2.5, 10), [o], 1, 32, 0))
    a_in, a_out, alpha, n = struct.unpack("<QQfi", blob)
    assert (alpha, n) == (2.5, 10) and a_in and a_out and a_in != a_out
    # In place: one donated buffer at both pointer parameters.
    blob = pack_only(pack_launch("inplace", SQUARE, (x, x, 10), [x], 1, 32, 0))
    a, b, n = struct.unpack("<QQi", blob)
    assert a == b != 0 and n == 10


@needs_jax
def test_handler_refuses_malformed_attributes():
    from nanocuda.jax_ops._spec import pack_launch

    x = jnp.arange(4, dtype=jnp.float32)
    p = pack_launch("scale", SCALE, (x, x, 1.0, 4), [x], 1, 32, 0)
    p.attributes["slots"] = np.array([0, 64], dtype=np.int64)  # past the 24 parameter bytes
    with pytest.raises(Exception, match="nanocuda jax op: buffer slot outside"):
        pack_only(p)


@needs_jax
def test_one_custom_call_with_the_launch_as_attributes():
    square = square_op()
    text = lowered(square, jnp.ones(1000, jnp.float32))
    calls = custom_calls(text)
    assert len(calls) == 1, text
    assert f"kernel = {SQUARE.handle} : i64" in calls[0]
    assert "dims = dense<[4, 1, 1, 256, 1, 1, 0]>" in calls[0]
    assert "slots = dense<[0, 0, 1, 8]>" in calls[0] and "param_bytes = 20 : i64" in calls[0]


@needs_jax
def test_scalars_are_packed_by_nanocudas_rules():
    from nanocuda.jax_ops._spec import pack_launch

    x = jnp.ones(10, jnp.float32)
    o = jax.ShapeDtypeStruct((10,), jnp.float32)
    p = pack_launch("scale", SCALE, (x, o, 2.5, 10), [o], 1, 32, 0)
    blob = p.attributes["params"].tobytes()[:int(p.attributes["param_bytes"])]
    assert struct.unpack_from("<fi", blob, 16) == (2.5, 10)
    assert list(p.attributes["slots"]) == [0, 0, 1, 8] and p.inputs[0] is x and not p.aliases
    with pytest.raises(ValueError, match="jax_ops scale: .* does not fit in 4 bytes"):
        pack_launch("scale", SCALE, (x, o, 2.5, 2**40), [o], 1, 32, 0)


@needs_jax
def test_inplace_kernel_donates_its_input():
    from nanocuda import jax_ops

    add = jax_ops.op_from_kernel(ADD_INPLACE, "add_inplace", inputs="y, x", inplace="y",
                                 grid=lambda y, x: (y.size + 127) // 128, block=128,
                                 args=lambda y, x, out: (out, x, y.size), dtypes="float32")
    y, x = jnp.zeros(64, jnp.float32), jnp.ones(64, jnp.float32)
    text = lowered(add, y, x)
    (call,) = custom_calls(text)
    assert "output_operand_alias" in call and "slots = dense<[0, 0, 1, 8]>" in call
    assert jax.eval_shape(add, y, x).shape == (64,)


@needs_jax
def test_grad_uses_the_backward_kernel():
    from nanocuda import jax_ops

    def backward(inputs, out, g):
        (x,) = inputs
        return jax_ops.launch(SCALE, lambda o: (g, o, 2.0, g.size), out=jax.ShapeDtypeStruct(g.shape, g.dtype),
                              grid=1, block=256) * x

    square = square_op(backward=backward)
    f = lambda x: jnp.sum(square(x))  # noqa: E731
    text = lowered(jax.value_and_grad(f), jnp.ones(100, jnp.float32))
    assert len(custom_calls(text)) == 2  # forward and backward launches
    assert len(custom_calls(lowered(jax.grad(f), jnp.ones(100, jnp.float32)))) == 1  # forward unused: gone
    assert f"kernel = {SCALE.handle} : i64" in text


@needs_jax
def test_vmap_methods():
    x = jnp.ones((4, 8), jnp.float32)
    seq = lowered(jax.vmap(square_op(vmap_method="sequential")), x)
    assert "stablehlo.while" in seq and len(custom_calls(seq)) == 1
    (call,) = custom_calls(lowered(jax.vmap(square_op(vmap_method="rebatch")), x))
    assert "(tensor<4x8xf32>) -> tensor<4x8xf32>" in call  # one launch over the whole batch
    assert "param_bytes = 20" in call and "dims = dense<[1, 1, 1, 256" in call
    with pytest.raises(ValueError, match="vmap_method must be one of"):
        square_op(vmap_method="loop")
    with pytest.raises(ValueError, match="square: vmap_method='broadcast_all' would launch once"):
        square_op(vmap_method="broadcast_all")


@needs_jax
def test_rebatch_broadcasts_unbatched_inputs():
    from nanocuda import jax_ops

    add = jax_ops.op_from_kernel(SCALE, "scale_rb", inputs="x", vmap_method="rebatch",
                                 grid=lambda x, alpha: 1, args=lambda x, o, alpha: (x, o, alpha, x.size))
    out = jax.eval_shape(jax.vmap(lambda x: add(x, alpha=2.0)), jnp.ones((3, 5)))
    assert out.shape == (3, 5)


@needs_jax
def test_scan_and_while_loop_lower_with_the_call_inside():
    square = square_op()

    def scan(x):
        return jax.lax.scan(lambda c, _: (square(c), None), x, None, length=3)[0]

    def loop(x):
        return jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, square(c[1])), (0, x))[1]

    for f in (scan, loop):
        text = lowered(f, jnp.ones(16, jnp.float32))
        assert "stablehlo.while" in text and len(custom_calls(text)) == 1


@needs_jax
def test_decorator_form_with_two_launches_and_two_outputs():
    from nanocuda import jax_ops

    @jax_ops.op("square_twice", dtypes={"x": "float32"}, ndim={"x": 1})
    def twice(x, *, alpha):
        o = jax.ShapeDtypeStruct(x.shape, x.dtype)
        a = jax_ops.launch(SQUARE, lambda o: (x, o, x.size), out=o, grid=1)
        b = jax_ops.launch(SCALE, lambda o: (a, o, alpha, a.size), out=o, grid=1)
        return a, b

    text = lowered(lambda x: twice(x, alpha=3.0), jnp.ones(8, jnp.float32))
    assert len(custom_calls(text)) == 2
    with pytest.raises(ValueError, match=r"square_twice: argument 0 \('x'\) has rank 2"):
        jax.eval_shape(lambda x: twice(x, alpha=1.0), jnp.ones((2, 2), jnp.float32))


@needs_jax
def test_trace_time_errors_name_the_op_and_argument():
    from nanocuda import jax_ops

    square = square_op()
    with pytest.raises(TypeError, match=r"square: argument 0 is int32\[4\]; the kernel was compiled for float32"):
        jax.jit(square).trace(jnp.ones(4, jnp.int32))
    with pytest.raises(TypeError, match="square: argument 0 must be an array"):
        square("x")
    bad_out = jax_ops.op_from_kernel(SQUARE, "bad_out", grid=1, out=lambda x: (3, 4),
                                     args=lambda x, o: (x, o, 4))
    with pytest.raises(ValueError, match="bad_out: the out function returned"):
        jax.eval_shape(bad_out, jnp.ones(4))
    wrong_count = jax_ops.op_from_kernel(SQUARE, "wrong_count", grid=1, args=lambda x, o: (x, o))
    with pytest.raises(TypeError, match="wrong_count: kernel 'square' takes 3 arguments, the args function gave 2"):
        jax.eval_shape(wrong_count, jnp.ones(4))
    array_for_int = jax_ops.op_from_kernel(SQUARE, "array_for_int", grid=1, args=lambda x, o: (x, o, o))
    with pytest.raises(TypeError, match="array_for_int: kernel argument 2 is an array but parameter 2"):
        jax.eval_shape(array_for_int, jnp.ones(4))
    unwritten = jax_ops.op_from_kernel(SQUARE, "unwritten", grid=1, args=lambda x, o: (x, x, 4))
    with pytest.raises(ValueError, match="unwritten: output 0 is not among the kernel's arguments"):
        jax.eval_shape(unwritten, jnp.ones(4))
    with pytest.raises(ValueError, match=r"dtypes= names 'y', which is not an input"):
        jax_ops.op_from_kernel(SQUARE, "dt", inputs="x", grid=1, dtypes={"y": "float32"})
    with pytest.raises(ValueError, match="block must be positive"):
        jax.eval_shape(jax_ops.op_from_kernel(SQUARE, "blk", grid=1, block=0,
                                              args=lambda x, o: (x, o, 1)), jnp.ones(4))
    with pytest.raises(ValueError, match="big_block: LaunchConfig.*at most 1024 threads"):
        jax.eval_shape(jax_ops.op_from_kernel(SQUARE, "big_block", grid=1, block=2048,
                                              args=lambda x, o: (x, o, 1)), jnp.ones(4))
    with pytest.raises(ValueError, match="inplace= names 'z'"):
        jax_ops.op_from_kernel(SQUARE, "ip", inputs="x", inplace="z", grid=1)


@needs_jax
def test_decorated_function_inputs_and_attributes():
    from nanocuda import jax_ops

    @jax_ops.op("scaled", dtypes={"x": "float32"})
    def scaled(x, alpha=1.0):
        return jax_ops.launch(SCALE, lambda o: (x, o, alpha, x.size), out=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              grid=1)

    assert scaled._inputs == ["x"]
    (call,) = custom_calls(lowered(lambda x: scaled(x, alpha=0.5), jnp.ones(8, jnp.float32)))
    assert "params = dense<[0, 0, 35416702976]>" in call  # 0.5f and 8 in the third word
    with pytest.raises(TypeError, match=r"scaled: takes 1 array argument\(s\) \(x\), got 2"):
        scaled(jnp.ones(2), jnp.ones(2))


@needs_jax
def test_backward_returning_the_wrong_count_is_named():
    square = square_op(backward=lambda xs, out, g: (g, g))
    with pytest.raises(ValueError, match="square: backward returned 2 cotangent"):
        jax.eval_shape(jax.grad(lambda x: jnp.sum(square(x))), jnp.ones(4, jnp.float32))


@needs_jax
def test_one_array_at_two_parameters():
    from nanocuda.jax_ops._spec import pack_launch

    x = jnp.ones(10, jnp.float32)
    p = pack_launch("twice", SQUARE, (x, x, 10), [x], 1, 32, 0)  # in place: reads and writes x
    assert list(p.attributes["slots"]) == [0, 0, 0, 8] and p.aliases == {0: 0} and len(p.inputs) == 1


@needs_jax
def test_empty_input_launches_nothing():
    square = square_op()
    assert custom_calls(lowered(square, jnp.ones(0, jnp.float32))) == []
    assert square(jnp.ones(0, jnp.float32)).shape == (0,)


@needs_jax
def test_kernel_function_has_as_jax_op():
    from nanocuda._kernel_function import KernelFunction

    op = KernelFunction(SQUARE, "square").as_jax_op("sq", grid=1, args=lambda x, o: (x, o, x.size))
    assert len(custom_calls(lowered(op, jnp.ones(4, jnp.float32)))) == 1
    assert repr(op) == "<nanocuda jax op sq>"
