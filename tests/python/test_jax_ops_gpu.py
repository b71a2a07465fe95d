"""nanocuda kernels as JAX ops on the GPU: results against pure JAX under jit, grad, vmap,
scan and while_loop, in-place (donated) kernels, the examples/jax_ops training run, and one
kernel used from torch and from JAX in one process."""

import os
import subprocess
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX and torch share the GPU

import pytest  # noqa: E402

pytestmark = [pytest.mark.gpu]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "jax_ops")
SOURCE = r"""
extern "C" __global__ void scale(const float* x, float* out, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * x[i];
}
extern "C" __global__ void square(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * x[i];
}
extern "C" __global__ void add_into(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}
extern "C" __global__ void sum_diff(const float* a, const float* b, float* s, float* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { s[i] = a[i] + b[i]; d[i] = a[i] - b[i]; }
}
"""


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    try:
        jax.devices("gpu")
    except RuntimeError as e:
        pytest.skip(f"needs JAX with its CUDA plugin: {e}")
    return jax


@pytest.fixture(scope="module")
def jnp(jax):
    return jax.numpy


@pytest.fixture(scope="module")
def mod():
    import nanocuda

    class Mod:
        pass

    program = nanocuda.compile(SOURCE)
    m = Mod()
    for name in ("scale", "square", "add_into", "sum_diff"):
        setattr(m, name, program.get_kernel(name))
    return m


def cdiv(a, b):
    return (a + b - 1) // b


@pytest.fixture(scope="module")
def ops(jax, mod):
    from nanocuda import jax_ops

    def square_backward(inputs, out, g):
        (x,) = inputs
        return scale(g, alpha=2.0) * x

    scale = jax_ops.op_from_kernel(mod.scale, "scale", grid=lambda x, alpha: cdiv(x.size, 256),
                                   args=lambda x, o, alpha: (x, o, alpha, x.size), dtypes="float32",
                                   vmap_method="rebatch")
    square = jax_ops.op_from_kernel(mod.square, "square", grid=lambda x: cdiv(x.size, 256),
                                    args=lambda x, o: (x, o, x.size), dtypes="float32",
                                    backward=square_backward, vmap_method="sequential")
    add_into = jax_ops.op_from_kernel(mod.add_into, "add_into", inputs="y, x", inplace="y",
                                      grid=lambda y, x: cdiv(y.size, 256),
                                      args=lambda y, x, o: (o, x, y.size), dtypes="float32")

    @jax_ops.op("sum_diff", dtypes="float32", vmap="rebatch")
    def sum_diff(a, b):
        o = jax.ShapeDtypeStruct(a.shape, a.dtype)
        return jax_ops.launch(mod.sum_diff, lambda s, d: (a, b, s, d, a.size), out=(o, o),
                              grid=cdiv(a.size, 256))

    return dict(scale=scale, square=square, add_into=add_into, sum_diff=sum_diff)


def test_jit_matches_jax(jax, jnp, ops):
    x = jax.random.normal(jax.random.PRNGKey(0), (1000,))
    assert jnp.array_equal(jax.jit(lambda x: ops["scale"](x, alpha=2.5))(x), 2.5 * x)
    assert jnp.allclose(jax.jit(ops["square"])(x), x * x)
    assert jnp.allclose(ops["square"](x), x * x)  # eager: JAX jits the call itself
    s, d = jax.jit(ops["sum_diff"])(x, 2 * x)
    assert jnp.allclose(s, 3 * x) and jnp.allclose(d, -x)
    big = jax.random.normal(jax.random.PRNGKey(1), (3, 70000))  # 2-D: the kernel sees it flat
    assert jnp.allclose(jax.jit(ops["square"])(big), big * big)


def test_grad_through_the_backward_kernel(jax, jnp, ops):
    x = jax.random.normal(jax.random.PRNGKey(2), (513,))
    g = jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(ops["square"](x)))))(x)
    want = jax.grad(lambda x: jnp.sum(jnp.sin(x * x)))(x)
    assert jnp.allclose(g, want, rtol=1e-5, atol=1e-5)


def test_vmap_methods(jax, jnp, ops):
    xs = jax.random.normal(jax.random.PRNGKey(3), (4, 300))
    assert jnp.allclose(jax.jit(jax.vmap(ops["square"]))(xs), xs * xs)  # sequential
    assert jnp.allclose(jax.jit(jax.vmap(lambda x: ops["scale"](x, alpha=3.0)))(xs), 3 * xs)  # rebatch
    s, d = jax.jit(jax.vmap(ops["sum_diff"], in_axes=(0, None)))(xs, xs[0])  # rebatch, b broadcast
    assert jnp.allclose(s, xs + xs[0]) and jnp.allclose(d, xs - xs[0])
    gs = jax.vmap(jax.grad(lambda x: jnp.sum(ops["square"](x))))(xs)
    assert jnp.allclose(gs, 2 * xs, rtol=1e-5)


def test_scan_and_while_loop(jax, jnp, ops):
    x = jnp.linspace(0.5, 1.0, 257, dtype=jnp.float32)

    def scan(x):
        return jax.lax.scan(lambda c, _: (ops["scale"](c, alpha=1.5), jnp.sum(c)), x, None, length=4)

    got, sums = jax.jit(scan)(x)
    assert jnp.allclose(got, x * 1.5 ** 4) and jnp.allclose(sums[1], jnp.sum(x * 1.5), rtol=1e-5)

    def loop(x):
        return jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, ops["square"](c[1])), (0, x))[1]

    assert jnp.allclose(jax.jit(loop)(x), x ** 8, rtol=1e-5)


def test_inplace_kernel_with_donation(jax, jnp, ops):
    y, x = jnp.ones(1000, jnp.float32), jnp.arange(1000, dtype=jnp.float32)
    f = jax.jit(ops["add_into"], donate_argnums=0)
    out = f(y, x)
    assert jnp.array_equal(out, 1 + x)
    assert jnp.array_equal(jax.jit(lambda y, x: ops["add_into"](y * 2, x))(jnp.ones(1000), x), 2 + x)


def test_trace_time_dtype_error(jax, jnp, ops):
    with pytest.raises(TypeError, match="square: argument 0 is int32"):
        jax.jit(ops["square"])(jnp.ones(4, jnp.int32))


def test_example_trains_like_plain_jax():
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    done = subprocess.run([sys.executable, os.path.join(EXAMPLE, "train.py")], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK" in done.stdout


def test_same_kernel_from_torch_and_jax(jax, jnp, mod):
    torch = pytest.importorskip("torch")
    from nanocuda import jax_ops, torch_ops

    kernel = mod.scale
    t_op = torch_ops.op_from_kernel(kernel, "nc_jax_gpu::scale", "(Tensor x, float alpha) -> Tensor",
                                    grid=lambda x, alpha: cdiv(x.numel(), 256),
                                    args=lambda x, alpha, out: (x, out, alpha, x.numel()), dtypes="float32")
    j_op = jax_ops.op_from_kernel(kernel, "scale_shared", grid=lambda x, alpha: cdiv(x.size, 256),
                                  args=lambda x, o, alpha: (x, o, alpha, x.size), dtypes="float32")
    t = torch.arange(5000, device="cuda", dtype=torch.float32)
    j = jnp.arange(5000, dtype=jnp.float32)
    assert torch.equal(t_op(t, 2.0), 2 * t)
    assert jnp.array_equal(jax.jit(lambda x: j_op(x, alpha=2.0))(j), 2 * j)
    # Across frameworks through DLPack: torch's result into the JAX op and back.
    tripled = t_op(t, 3.0)
    torch.cuda.synchronize()  # the two frameworks use different streams
    shared = jax.dlpack.from_dlpack(tripled)
    halved = jax.jit(lambda x: j_op(x, alpha=0.5))(shared).block_until_ready()
    back = torch.from_dlpack(halved)
    assert torch.allclose(back, 1.5 * t)
