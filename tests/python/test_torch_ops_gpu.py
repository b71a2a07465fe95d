"""nanocuda kernels as torch ops on the GPU: eager (direct path and dispatcher), streams,
torch.cuda.graph capture, torch.compile (fullgraph, no graph breaks, dynamic shapes,
reduce-overhead), autograd against torch's own layer_norm + gelu, bad inputs, and the
examples/torch_ops training run."""

import itertools
import os
import sys

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.needs_torch]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "torch_ops")
SOURCE = r"""
extern "C" __global__ void scale(const float* x, float* out, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * x[i];
}
// Slow on purpose (spins ~cycles), so a launch on the wrong stream would be seen.
extern "C" __global__ void slow_fill(float* out, float value, long long cycles, int n) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}
"""
_count = itertools.count()


def fresh(name="op"):
    return f"nc_gpu{next(_count)}::{name}"


@pytest.fixture(scope="module")
def torch():
    import torch

    return torch


@pytest.fixture(scope="module")
def code():
    import nanocuda

    return nanocuda.compile(SOURCE)


@pytest.fixture(scope="module")
def scale(torch, code):
    from nanocuda import torch_ops

    return torch_ops.op_from_kernel(
        code.get_kernel("scale"), fresh("scale"), "(Tensor x, float alpha) -> Tensor",
        grid=lambda x, alpha: (x.numel() + 255) // 256, block=256,
        args=lambda x, alpha, out: (x, out, alpha, x.numel()), dtypes="float32")


@pytest.fixture(scope="module")
def ln_gelu():
    sys.path.insert(0, EXAMPLE)
    import ln_gelu

    return ln_gelu


def test_eager_direct_path_and_dispatcher_agree(torch, scale):
    x = torch.randn(1000, device="cuda")
    assert torch.equal(scale(x, 2.5), x * 2.5)
    assert torch.equal(scale.default(x, 2.5), x * 2.5)
    namespace, name = scale.name.split("::")
    assert torch.equal(getattr(getattr(torch.ops, namespace), name)(x, 2.5), x * 2.5)
    assert scale(torch.empty(0, device="cuda"), 1.0).shape == (0,)  # a zero grid launches nothing


def test_mutating_op_and_the_workflow_one_liner(torch, tmp_path):
    import nanocuda

    path = tmp_path / "scale.cu"
    path.write_text(SOURCE)
    mod = nanocuda.load(path)
    scale_out = mod.scale.as_op(fresh("scale_out"), "(Tensor x, float alpha, Tensor(a!) out) -> ()",
                                grid=lambda x, a, out: (x.numel() + 255) // 256,
                                args=lambda x, a, out: (x, out, a, x.numel()))
    x, out = torch.randn(777, device="cuda"), torch.zeros(777, device="cuda")
    assert scale_out(x, 3.0, out) is None
    assert torch.equal(out, x * 3)
    out.zero_()
    scale_out.default(x, 4.0, out)
    assert torch.equal(out, x * 4)


def test_follows_torch_current_stream(torch, code):
    from nanocuda import torch_ops

    fill = torch_ops.op_from_kernel(code.get_kernel("slow_fill"), fresh("fill"),
                                    "(Tensor(a!) out, float value, int cycles) -> ()", grid=4, block=256,
                                    args=lambda out, v, c: (out, v, c, out.numel()))
    out = torch.zeros(1024, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        assert torch_ops.stream(out).handle == side.cuda_stream
        fill(out, 7.0, 50_000_000)  # ~30 ms on the side stream
        snapshot = out.clone()  # ordered after the fill on the same stream
    side.synchronize()
    assert torch.all(snapshot == 7.0)
    # Back on torch's default stream (handle 0, the legacy stream: nanocuda names it 0x1).
    assert torch.cuda.current_stream().cuda_stream == 0 and torch_ops.stream(out).handle in (0, 1)


def test_cuda_graph_capture_replays(torch, scale):
    x = torch.randn(4096, device="cuda")
    scale(x, 2.0)  # warm up (binds the launcher) outside capture
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        scale(x, 2.0)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        y = scale(x, 2.0)
    x.copy_(torch.arange(4096, device="cuda", dtype=torch.float32))
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(y, x * 2)


def test_compile_fullgraph_no_breaks_dynamic_and_reduce_overhead(torch, scale):
    def f(x):
        return scale(torch.relu(x), 3.0) + 1

    x = torch.randn(2048, device="cuda")
    explain = torch._dynamo.explain(f)(x)
    assert explain.graph_break_count == 0 and explain.graph_count == 1, explain
    torch._dynamo.reset()
    g = torch.compile(f, fullgraph=True, dynamic=True)
    for n in (2048, 3000, 5000):
        x = torch.randn(n, device="cuda")
        assert torch.allclose(g(x), f(x))
    torch._dynamo.reset()
    h = torch.compile(f, fullgraph=True, mode="reduce-overhead")
    for i in range(4):  # warm-up, record, then replays on new data
        x = torch.randn(2048, device="cuda")
        assert torch.allclose(h(x).clone(), f(x)), i


def test_bad_inputs_eager_and_compiled(torch, scale):
    x = torch.randn(64, device="cuda")
    cases = [
        (torch.randn(64), ValueError, "must be a CUDA tensor"),
        (x.half(), TypeError, "compiled for torch.float32"),
        (torch.randn(8, 16, device="cuda").t(), ValueError, "must be contiguous"),
    ]
    for bad, exc, message in cases:
        with pytest.raises(exc, match=message):
            scale(bad, 1.0)
        with pytest.raises(exc, match=message):
            scale.default(bad, 1.0)
        torch._dynamo.reset()
        with pytest.raises(Exception, match=message):
            torch.compile(lambda t: scale(t, 1.0), fullgraph=True, backend="aot_eager")(bad)


def test_tensors_on_two_devices(torch, code):
    from nanocuda import torch_ops

    two = torch_ops.op_from_kernel(code.get_kernel("scale"), fresh("two"), "(Tensor x, Tensor(a!) out) -> ()",
                                   grid=1, args=lambda x, out: (x, out, 1.0, x.numel()))
    cuda, cpu = torch.ones(4, device="cuda"), torch.ones(4)
    with pytest.raises(ValueError, match="argument 'x' must be a CUDA tensor"):
        two(cpu, cuda)  # the first tensor: the op's own check
    with pytest.raises(ValueError, match="argument 'out' must be a CUDA tensor"):
        two(cuda, cpu)  # a later tensor: the Launcher's device check, reported as the op's
    if torch.cuda.device_count() < 2:
        pytest.skip("needs 2 GPUs for the cuda:0 + cuda:1 case (the CPU + CUDA cases passed)")
    with pytest.raises(ValueError, match="all tensors of one call must be on one device"):
        two(torch.ones(4, device="cuda:0"), torch.ones(4, device="cuda:1"))


def reference(torch, x, w, b, eps=1e-5):
    return torch.nn.functional.gelu(torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps))


def test_ln_gelu_forward_and_gradients_match_torch(torch, ln_gelu):
    torch.manual_seed(0)
    for shape in [(64, 256), (3, 5, 100), (1, 1000)]:
        n = shape[-1]
        x = torch.randn(*shape, device="cuda", requires_grad=True)
        w = (1 + 0.1 * torch.randn(n, device="cuda")).requires_grad_()
        b = (0.1 * torch.randn(n, device="cuda")).requires_grad_()
        dy = torch.randn(*shape, device="cuda")
        ours = ln_gelu.ln_gelu(x, w, b)
        gx, gw, gb = torch.autograd.grad(ours, (x, w, b), dy)
        ref = reference(torch, x, w, b)
        rx, rw, rb = torch.autograd.grad(ref, (x, w, b), dy)
        assert torch.allclose(ours, ref, atol=1e-5, rtol=1e-4)
        for got, want in ((gx, rx), (gw, rw), (gb, rb)):
            assert torch.allclose(got, want, atol=2e-4, rtol=1e-3), (shape, (got - want).abs().max())


def test_ln_gelu_compiled_training_matches_plain_pytorch(torch):
    sys.path.insert(0, EXAMPLE)
    import train

    for mode in ("default", "reduce-overhead"):
        torch._dynamo.reset()
        train.main(steps=4, compile_mode=mode)  # asserts losses and parameters match


def test_ln_gelu_compiled_graph_has_no_breaks(torch, ln_gelu):
    m = ln_gelu.LayerNormGELU(128).cuda()
    x = torch.randn(32, 128, device="cuda", requires_grad=True)
    explain = torch._dynamo.explain(lambda x: m(x).sum())(x)
    assert explain.graph_break_count == 0


def test_ln_gelu_rejects_half_precision(torch, ln_gelu):
    x = torch.randn(4, 64, device="cuda", dtype=torch.float16)
    w, b = torch.ones(64, device="cuda", dtype=torch.float16), torch.zeros(64, device="cuda", dtype=torch.float16)
    with pytest.raises(TypeError, match="argument 'x' is a torch.float16 .* compiled for torch.float32"):
        ln_gelu.ln_gelu(x, w, b)


def test_bench_torch_quick(torch, monkeypatch, capsys):
    from nanocuda.bench import torch_ops as bench

    monkeypatch.setenv("NANOCUDA_EXAMPLES", os.path.join(REPO, "examples"))
    result = bench.run(rounds=3, burst=20, train=False)  # the training rows: `nanocuda bench torch`
    names = [r["name"] for r in result["call_rows"]]
    assert bench.OP_OUT in names and bench.OP_NEW in names
    assert all(r["min_us"] > 0 for r in result["call_rows"])


def test_readme_examples(torch, tmp_path):
    import nanocuda
    from nanocuda import torch_ops
    from nanocuda.workflow import example_path

    mod = nanocuda.load(example_path("square.cu"))
    square = mod.square.as_op(fresh("square"), "(Tensor x) -> Tensor",
                              grid=lambda x: (x.numel() + 255) // 256, block=256,
                              args=lambda x, out: (x, out, x.numel()), dtypes="float32")
    x = torch.randn(4096, device="cuda")
    torch._dynamo.reset()
    assert torch.allclose(torch.compile(lambda x: square(x) + 1, fullgraph=True)(x), x * x + 1)

    path = tmp_path / "scale.cu"
    path.write_text(SOURCE)
    kernels = nanocuda.load(path)

    @torch_ops.op(fresh("scale"), like="x", dtypes="float32")
    def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
        out = torch.empty_like(x)
        kernels.scale[(x.numel() + 255) // 256, 256](x, out, alpha, x.numel(), stream=torch_ops.stream(x))
        return out

    for _ in range(5):  # past the calls that compare outputs with like=
        assert torch.equal(scale(x, 2.0), x * 2)
    assert torch.equal(scale.default(x, 3.0), x * 3)
    torch._dynamo.reset()
    assert torch.allclose(torch.compile(lambda x: scale(x, 2.0) - x, fullgraph=True, dynamic=True)(x), x)


def test_torch_opcheck_on_the_gpu(torch, scale, ln_gelu):
    x = torch.randn(64, 128, device="cuda", requires_grad=True)
    w = torch.randn(128, device="cuda", requires_grad=True)
    b = torch.randn(128, device="cuda", requires_grad=True)
    for op, args in [(scale.default, (x.detach(), 2.0)),
                     (ln_gelu.ln_gelu_forward.default, (x, w, b, 1e-5))]:
        result = torch.library.opcheck(op, args)
        assert set(result.values()) == {"SUCCESS"}, (op, result)


def test_vmap_rule_on_the_gpu(torch, code):
    from nanocuda import torch_ops

    def rule(info, in_dims, x, alpha):  # elementwise: the batched tensor is just a bigger input
        return op(x.contiguous(), alpha), in_dims[0]

    op = torch_ops.op_from_kernel(code.get_kernel("scale"), fresh("vscale"), "(Tensor x, float alpha) -> Tensor",
                                  grid=lambda x, a: (x.numel() + 255) // 256,
                                  args=lambda x, a, out: (x, out, a, x.numel()), vmap=rule)
    x = torch.randn(5, 300, device="cuda")
    assert torch.equal(torch.vmap(lambda r: op(r, 2.0))(x), x * 2)
