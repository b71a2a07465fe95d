"""gemm()/matmul() of run_hopper_gemm_fast.py on the GPU: the chosen configurations and the cached host path."""

import pathlib
import sys

import pytest

import nanocuda

KERNELS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "kernels"


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch")
    major, minor = nanocuda.Device(0).compute_capability
    if (major, minor) != (9, 0):
        pytest.skip(f"hopper_gemm_fast is compiled for sm_90a; device 0 is sm_{major}{minor}")
    return torch


@pytest.fixture(scope="module")
def example(torch):
    sys.path.insert(0, str(KERNELS))
    try:
        import run_hopper_gemm_fast as example
    finally:
        sys.path.remove(str(KERNELS))
    return example


def rel_err(c, ref):
    return ((c.double() - ref).norm() / ref.norm()).item()


# issue 27's odd cells, scaled where the full one adds nothing: each takes a different choice
SHAPES = [(3072, 3072, 3000), (3000, 5000, 2048), (1000, 8192, 3000), (2048, 2048, 2048), (300, 520, 136),
          (4097, 3001, 1032)]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("layout", ["nk", "kn"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_chosen_configuration_is_correct(torch, example, m, n, k, layout, dtype):
    dt = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda", dtype=dt)
    b = torch.randn(*((k, n) if layout == "kn" else (n, k)), device="cuda", dtype=dt)
    c = (example.matmul if layout == "kn" else example.gemm)(a, b)
    ref = a.double() @ (b.double() if layout == "kn" else b.double().T)
    torch.cuda.synchronize()
    assert rel_err(c, ref) < (1e-3 if dtype == "float16" else 6e-3), example.default_gemm(layout, a, b)


def test_cached_plan_reads_the_current_contents(torch, example):
    a = torch.randn(512, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(384, 256, device="cuda", dtype=torch.float16)
    first = example.gemm(a, b)
    a.mul_(2)  # same pointers, same shape: the cached plan, new values
    second = example.gemm(a, b)
    torch.cuda.synchronize()
    assert first.data_ptr() != second.data_ptr()  # `first` is alive: a fresh output
    torch.testing.assert_close(second, 2 * first, rtol=2e-3, atol=2e-2)
    out = torch.empty(512, 384, device="cuda", dtype=torch.float16)
    assert example.gemm(a, b, out=out) is out
    torch.cuda.synchronize()
    torch.testing.assert_close(out, second)


def test_copies_take_the_general_path(torch, example):
    m, n, k = 200, 136, 72
    base = torch.randn(k, m, device="cuda", dtype=torch.float16)
    a = base.T  # not contiguous: copied, never cached by pointer
    b = torch.randn(n, k, device="cuda", dtype=torch.float16)
    c = example.gemm(a, b)
    a_odd = torch.randn(m, 13, device="cuda", dtype=torch.float16)  # K % 8: padded
    b_odd = torch.randn(13, n, device="cuda", dtype=torch.float16)
    c_odd = example.matmul(a_odd, b_odd)
    torch.cuda.synchronize()
    assert rel_err(c, a.double() @ b.double().T) < 1e-3
    assert rel_err(c_odd, a_odd.double() @ b_odd.double()) < 1e-3


def test_runs_on_torch_current_stream(torch, example):
    s = torch.cuda.Stream()
    a = torch.empty(2048, 2048, device="cuda", dtype=torch.float16)
    b = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    src = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        for _ in range(20):  # a long queue on s: a gemm on another stream would read `a` early
            a.copy_(src * 0.5)
        c = example.gemm(a, b)
    s.synchronize()
    assert rel_err(c, (src * 0.5).double() @ b.double().T) < 1e-3


def test_fresh_and_given_outputs(torch, example):
    # the cached path allocates a fresh output like a (dtype, device, contiguous) and checks a given one
    a = torch.randn(256, 128, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(192, 128, device="cuda", dtype=torch.bfloat16)
    c = example.gemm(a, b)
    assert c.dtype == torch.bfloat16 and c.device == a.device and c.is_contiguous() and c.shape == (256, 192)
    assert type(c) is torch.Tensor
    for bad in (torch.empty(256, 191, device="cuda", dtype=torch.bfloat16),  # wrong shape
                torch.empty(256, 192, device="cuda", dtype=torch.float16),  # wrong dtype
                torch.empty(192, 256, device="cuda", dtype=torch.bfloat16).T):  # not contiguous
        with pytest.raises(ValueError, match="out must be a contiguous 256×192"):
            example.gemm(a, b, out=bad)
    torch.cuda.synchronize()
    assert rel_err(c, a.double() @ b.double().T) < 6e-3
