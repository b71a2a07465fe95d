"""nanocuda.torch_ops without a GPU: import hygiene, registration errors, input checks, and
the torch.compile / autograd / vmap plumbing, exercised with CPU bodies through the op's
device-type seam (the GPU file runs the same paths with real kernels)."""

import itertools
import subprocess
import sys

import pytest

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch (not installed)")
_count = itertools.count()


def fresh(name="op"):
    return f"nc_test{next(_count)}::{name}"


def test_import_nanocuda_and_torch_ops_does_not_import_torch():
    code = "import sys, nanocuda, nanocuda.torch_ops; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.skipif(torch is not None, reason="checks the error when torch is absent")
def test_without_torch_says_so():
    from nanocuda import torch_ops

    with pytest.raises(ImportError, match="needs PyTorch"):
        torch_ops.op("a::b")(lambda x: x)


@pytest.fixture
def cpu_ops(monkeypatch):
    """Ops made while this is active take CPU tensors: the plumbing (registration, checks,
    compile, autograd, vmap) is tested here with plain torch bodies, kernels on the GPU."""
    from nanocuda.torch_ops import _spec

    monkeypatch.setattr(_spec, "device_type", "cpu")


def cpu_op(name=None, body=None, **kw):
    """An op whose body is plain torch code on the CPU (needs the cpu_ops fixture)."""
    from nanocuda import torch_ops

    def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
        return x * alpha

    kw.setdefault("like", "x")
    return torch_ops.op(fresh("scale") if name is None else name, **kw)(body or scale)


@needs_torch
def test_op_registers_a_torch_operator_with_its_schema(cpu_ops):
    op = cpu_op(dtypes="float32")
    x = torch.randn(8, 4)
    assert torch.equal(op(x, 2.0), x * 2)
    assert torch.equal(op.default(x, 2.0), x * 2)  # through torch's dispatcher
    assert str(op.default._schema).endswith("(Tensor x, float alpha) -> Tensor")
    assert "nanocuda torch op" in repr(op)
    assert "def __call__(self, x, alpha)" in type(op)._fast_source  # the generated eager path


@needs_torch
def test_registering_a_name_twice_is_an_error(cpu_ops):
    name = fresh("twice")
    cpu_op(name)
    with pytest.raises(ValueError, match="already registered.*test_torch_ops.py"):
        cpu_op(name)


@needs_torch
@pytest.mark.parametrize("name", ["noseparator", "a::b::c", "1a::b", "a::", ""])
def test_bad_op_names(name, cpu_ops):
    with pytest.raises(ValueError, match="namespace::name"):
        cpu_op(name)


@needs_torch
def test_bad_specs_name_the_problem(cpu_ops):
    with pytest.raises(ValueError, match="like='y' is not a tensor argument"):
        cpu_op(like="y")
    with pytest.raises(ValueError, match="dtypes= names 'w'"):
        cpu_op(dtypes={"w": "float32"})
    with pytest.raises(ValueError, match="unknown dtype name 'floaty'"):
        cpu_op(dtypes="floaty")
    with pytest.raises(ValueError, match="fake= or like="):
        cpu_op(fake=lambda x, a: x)


@needs_torch
def test_cpu_tensor_for_a_cuda_op_is_a_clear_error():
    from nanocuda import torch_ops

    @torch_ops.op(fresh(), like="x")
    def ident(x: torch.Tensor) -> torch.Tensor:
        raise AssertionError("must not run")

    with pytest.raises(ValueError, match=r"argument 'x' must be a CUDA tensor, got a torch.float32 .* on cpu"):
        ident(torch.ones(3))
    with pytest.raises(ValueError, match="must be a CUDA tensor"):
        ident.default(torch.ones(3))  # the dispatcher path checks too


@needs_torch
def test_dtype_and_contiguity_checks_in_eager(cpu_ops):
    op = cpu_op(dtypes={"x": ("float32", torch.float64)})
    op(torch.ones(2, 2, dtype=torch.float64), 1.0)
    with pytest.raises(TypeError, match="argument 'x' is a torch.float16 .* compiled for torch.float32 or torch.float64"):
        op(torch.ones(2, 2, dtype=torch.float16), 1.0)
    with pytest.raises(ValueError, match=r"must be contiguous .* strides \(1, 2\) .* pass x.contiguous\(\)"):
        op(torch.ones(3, 2).t(), 1.0)
    loose = cpu_op(contiguous=False)
    assert torch.equal(loose(torch.ones(3, 2).t(), 2.0), torch.full((2, 3), 2.0))


@needs_torch
def test_a_wrong_output_shape_function_is_caught(cpu_ops):
    with pytest.raises(ValueError, match="output-shape function returned 'nope'"):
        cpu_op(out_shape=lambda x, a: "nope")(torch.ones(3), 1.0)
    with pytest.raises(ValueError, match="negative size"):
        cpu_op(out_shape=lambda x, a: (-1,))(torch.ones(3), 1.0)
    # A shape that disagrees with what the function returns: found on the first calls.
    wrong = cpu_op(out_shape=lambda x, a: (x.shape[0], 2))
    with pytest.raises(ValueError, match=r"output 0 is torch.float32\[4\] but the fake .* says torch.float32\[4, 2\]"):
        wrong(torch.ones(4), 1.0)
    wrong_fake = cpu_op(like=None, fake=lambda x, a: x.new_empty(3))
    with pytest.raises(ValueError, match="fake"):
        wrong_fake(torch.ones(4), 1.0)


@needs_torch
def test_compiled_fullgraph_has_no_graph_breaks_and_matches_eager(cpu_ops):
    op = cpu_op(dtypes="float32")

    def f(x):
        return op(x, 3.0).sin() + 1

    x = torch.randn(16, 8)
    explain = torch._dynamo.explain(f)(x)
    assert explain.graph_break_count == 0 and explain.graph_count == 1
    for dynamic in (False, True):
        torch._dynamo.reset()
        g = torch.compile(f, fullgraph=True, backend="aot_eager", dynamic=dynamic)
        for n in (16, 24):
            x = torch.randn(n, 8)
            assert torch.allclose(g(x), f(x))


@needs_torch
def test_compiled_mode_reports_the_same_errors(cpu_ops):
    op = cpu_op(dtypes="float32")
    g = torch.compile(lambda x: op(x, 2.0), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match="compiled for torch.float32"):
        g(torch.ones(4, dtype=torch.float64))
    with pytest.raises(Exception, match="must be contiguous"):
        g(torch.ones(4, 3).t())


@needs_torch
def test_autograd_formula_and_the_eager_fast_path(cpu_ops):
    def body(x: torch.Tensor, alpha: float) -> torch.Tensor:
        return x * alpha

    def backward(ctx, grad):
        return grad * ctx.alpha, None

    def setup(ctx, inputs, output):
        ctx.alpha = inputs[1]

    op = cpu_op(body=body, backward=backward, setup_context=setup, dtypes="float64")
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: op(x, 3.0), (x,))
    y = op(x, 2.0)
    assert y.requires_grad and y.grad_fn is not None  # went through the dispatcher
    with torch.no_grad():
        assert not op(x, 2.0).requires_grad  # no grad needed: the direct path
    g = torch.compile(lambda x: op(x, 2.0).sum(), fullgraph=True, backend="aot_eager")
    (gx,) = torch.autograd.grad(g(x), x)
    assert torch.allclose(gx, torch.full_like(x, 2.0))


@needs_torch
def test_vmap_rule(cpu_ops):
    def rule(info, in_dims, x, alpha):
        return x * alpha, in_dims[0]

    op = cpu_op(vmap=rule)
    x = torch.randn(3, 4)
    assert torch.allclose(torch.vmap(lambda r: op(r, 2.0))(x), x * 2)


@needs_torch
def test_eager_fast_path_defers_to_the_dispatcher_under_modes(cpu_ops):
    from torch._subclasses.fake_tensor import FakeTensorMode

    op = cpu_op()
    with FakeTensorMode() as mode:
        x = mode.from_tensor(torch.ones(4, 2))
        y = op(x, 2.0)  # the fake implementation runs: shapes only
        assert type(y).__name__ == "FakeTensor" and y.shape == (4, 2)
    assert torch.equal(op(torch.ones(2), 2.0), torch.full((2,), 2.0))


@needs_torch
def test_op_from_kernel_validates_its_schema_and_outputs():
    from nanocuda import torch_ops

    with pytest.raises(ValueError, match="schema must look like"):
        torch_ops.op_from_kernel(None, fresh(), "Tensor x -> Tensor", grid=1)
    with pytest.raises(ValueError, match="cannot parse schema"):
        torch_ops.op_from_kernel(None, fresh(), "(Tensor x -> Tensor", grid=1)
    with pytest.raises(ValueError, match="every output must be a Tensor"):
        torch_ops.op_from_kernel(None, fresh(), "(Tensor x) -> int", grid=1)
    op = torch_ops.op_from_kernel(None, fresh(), "(Tensor x, Tensor(a!) out) -> ()", grid=1)
    assert op.default._schema.arguments[1].alias_info.is_write
    with pytest.raises(ValueError, match="must be a CUDA tensor"):
        op(torch.ones(2), torch.ones(2))
    # The fake implementation allocates like the first tensor (or like=/out_shape=).
    shaped = torch_ops.op_from_kernel(None, fresh(), "(Tensor x, int k) -> (Tensor, Tensor)", grid=1,
                                      out_shape=lambda x, k: [(k,), x.shape])
    with torch._subclasses.fake_tensor.FakeTensorMode() as mode:
        a, b = shaped(mode.from_tensor(torch.ones(3, 2, device="meta")).to("cuda"), 5)
        assert a.shape == (5,) and b.shape == (3, 2) and a.device.type == "cuda"


@needs_torch
def test_stream_of_a_cpu_tensor_is_an_error():
    from nanocuda import torch_ops

    with pytest.raises(ValueError, match="is not a CUDA tensor"):
        torch_ops.stream(torch.ones(1))


@needs_torch
def test_torch_opcheck_passes(cpu_ops):
    """torch.library.opcheck: schema, fake tensors, autograd registration, AOT dispatch."""
    from nanocuda import torch_ops

    op = cpu_op(dtypes="float32", backward=lambda ctx, g: (g * ctx.alpha, None),
                setup_context=lambda ctx, inputs, output: setattr(ctx, "alpha", inputs[1]))
    result = torch.library.opcheck(op.default, (torch.randn(8, 4, requires_grad=True), 2.0))
    assert set(result.values()) == {"SUCCESS"}, result

    @torch_ops.op(fresh("square_out"), mutates_args=("out",))
    def square_out(x: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(x * x)

    result = torch.library.opcheck(square_out.default, (torch.randn(4), torch.empty(4)))
    assert set(result.values()) == {"SUCCESS"}, result
