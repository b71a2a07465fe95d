"""Every example kernel against a torch reference, with fresh random inputs (GPU + torch)."""

import os
import pathlib
import subprocess
import sys

import pytest

import nanocuda

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNELS = ROOT / "examples" / "kernels"
pytestmark = [pytest.mark.gpu, pytest.mark.needs_torch]


@pytest.fixture(scope="module")
def torch():
    import torch as t

    return t


def needs_sm90():
    major, minor = nanocuda.Device(0).compute_capability
    if (major, minor) != (9, 0):
        pytest.skip(f"hopper_gemm is compiled for sm_90a; device 0 is sm_{major}{minor}")


@pytest.mark.parametrize("n", [1, 1000, 1 << 20])
def test_saxpy_matches_torch(torch, n):
    saxpy = nanocuda.load(KERNELS / "saxpy.cu").saxpy
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    saxpy(2.5, x, y, out, n, grid=(n + 255) // 256, block=256)
    torch.testing.assert_close(out, 2.5 * x + y)


@pytest.mark.parametrize("n", [1, 5, 1000, (1 << 20) + 3])
@pytest.mark.parametrize("offset", [0, 1])  # 1: views that are not 16-byte aligned (scalar path)
@pytest.mark.parametrize("grid", [1, 7, None])
def test_saxpy_vectorized_any_grid_and_alignment(torch, n, offset, grid):
    saxpy = nanocuda.load(KERNELS / "saxpy.cu").saxpy
    x, y = torch.rand(n + 1, device="cuda")[offset:offset + n], torch.rand(n + 1, device="cuda")[offset:offset + n]
    out = torch.full((n + 1,), float("nan"), device="cuda")[offset:offset + n]
    saxpy(-1.5, x, y, out, n, grid=grid or (n + 1023) // 1024, block=256)
    torch.testing.assert_close(out, -1.5 * x + y)


@pytest.mark.parametrize("n", [1, 777, 1 << 22])
def test_square_matches_torch_with_call_and_bound_forms(torch, n):
    mod = nanocuda.load(KERNELS / "square.cu")
    x = torch.randn(n, device="cuda")
    out1, out2 = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
    mod.square(x, out1, n, grid=min((n + 255) // 256, 4096), block=256)
    mod.square[64, 256](x, out2, n)  # grid-stride loop: a small grid still covers n
    torch.testing.assert_close(out1, x * x)
    torch.testing.assert_close(out2, x * x)
    xs = torch.randn(n + 1, device="cuda")[1:]  # misaligned view: the scalar path
    out3 = torch.full_like(xs, float("nan"))
    mod.square[3, 128](xs, out3, n)
    torch.testing.assert_close(out3, xs * xs)


def test_workflow_launches_on_torchs_current_stream(torch):
    mod = nanocuda.load(KERNELS / "square.cu")
    side = torch.cuda.Stream()
    x = torch.randn(1 << 20, device="cuda")
    out = torch.zeros_like(x)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        assert nanocuda.workflow.default_stream().handle == side.cuda_stream
        mod.square[256, 256](x, out, x.numel())
    side.synchronize()
    torch.testing.assert_close(out, x * x)


@pytest.mark.parametrize("m,n,k", [(16, 16, 16), (128, 96, 64), (300, 200, 517), (512, 512, 512)])
@pytest.mark.parametrize("kernel", ["matmul_naive", "matmul_tiled"])
def test_matmul_matches_torch(torch, kernel, m, n, k):
    mod = nanocuda.load(KERNELS / "matmul.cu")
    a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
    c = torch.full((m, n), float("nan"), device="cuda")
    getattr(mod, kernel)(a, b, c, m, n, k, grid=((n + 15) // 16, (m + 15) // 16), block=(16, 16))
    ref = (a.double() @ b.double()).float()
    torch.testing.assert_close(c, ref, rtol=1e-4, atol=1e-3 * k ** 0.5)


@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (128, 128, 128), (512, 512, 512), (1024, 1024, 1024),
                                   (256, 512, 384), (200, 136, 72), (64, 64, 1024), (1000, 8, 8)])
def test_hopper_gemm_matches_torch(torch, m, n, k):
    needs_sm90()
    sys.path.insert(0, str(KERNELS))
    try:
        import run_hopper_gemm as example
    finally:
        sys.path.remove(str(KERNELS))
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, device="cuda", dtype=torch.float16)
    c = example.gemm(a, b)
    torch.cuda.synchronize()
    ref = a.float() @ b.float().T
    # fp32 accumulation in another order, then one fp16 rounding: within about one fp16 ulp.
    torch.testing.assert_close(c.float(), ref, rtol=2e-3, atol=2e-3 * k ** 0.5)


def test_hopper_gemm_writes_nothing_outside_c(torch):
    needs_sm90()
    sys.path.insert(0, str(KERNELS))
    try:
        import run_hopper_gemm as example
    finally:
        sys.path.remove(str(KERNELS))
    m, n, k = 100, 72, 40
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, device="cuda", dtype=torch.float16)
    big = torch.full((m + 64, n), 7.0, device="cuda", dtype=torch.float16)
    c = big[:m]  # a view: the rows after it must stay untouched by the clipped TMA store
    mod = example.mod
    maps = example.tensor_maps(a, b, c)
    mod.hopper_gemm[((n + 63) // 64, (m + 63) // 64), 128](*maps, k)
    torch.cuda.synchronize()
    torch.testing.assert_close(c.float(), a.float() @ b.float().T, rtol=2e-3, atol=2e-2)
    assert bool((big[m:] == 7.0).all())


def fast_gemm_example():
    sys.path.insert(0, str(KERNELS))
    try:
        import run_hopper_gemm_fast as example
    finally:
        sys.path.remove(str(KERNELS))
    return example


FAST_SHAPES = [(128, 256, 64), (64, 64, 64), (1, 1, 8), (200, 136, 72), (1000, 333, 100), (300, 520, 13),
               (257, 129, 4104), (4097, 3001, 1032), (2048, 2048, 2048), (129, 1, 4096), (513, 7, 24)]


@pytest.mark.parametrize("m,n,k", FAST_SHAPES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("bn", [256, 192, 128])
def test_hopper_gemm_fast_matches_torch(torch, m, n, k, dtype, bn):
    needs_sm90()
    example = fast_gemm_example()
    g = example.HopperGemm(bn=bn) if bn != 256 else example.HopperGemm()
    dt = getattr(torch, dtype)
    for _ in range(2):  # fresh inputs each time: a race shows as a moving error
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(n, k, device="cuda", dtype=dt)
        c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
        g(a, b, out=c)
        torch.cuda.synchronize()
        assert not torch.isnan(c).any(), "every element is written"
        ref = a.double() @ b.double().T
        err = ((c.double() - ref).norm() / ref.norm()).item()
        # fp32 accumulation, one rounding to 16 bits: ~ half an ulp of the output type.
        assert err < (1e-3 if dtype == "float16" else 6e-3), err


# Odd M and N tails; N % 8 != 0 (TMA-store variants fall back to register stores); K % 8 != 0
# (padded); 2350×2056: 19 tile rows (a cluster's second block has no tile in the last pair)
# and more tiles than SMs, with a last tile column of one 64-wide chunk (TMA store buffers).
VARIANT_SHAPES = [(128, 256, 64), (1, 1, 8), (200, 136, 72), (1000, 333, 100), (300, 520, 13),
                  (257, 129, 4104), (513, 7, 24), (2350, 2056, 136), (4097, 3001, 1032)]
_variant_gemms = {}


@pytest.mark.parametrize("m,n,k", VARIANT_SHAPES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("b_layout", ["nk", "kn"])
@pytest.mark.parametrize("variant", ["base", "cluster2", "tma_store", "cluster2_tma_store", "bn192", "bn192_c2",
                                     "bn128", "bn128_c2", "bn192_c2_g16", "bn192_c4", "bn256_c4",
                                     "bn192_c2_g16_cb1", "bn192_c2_g16_s5", "bn192_c2_df", "bn192_df",
                                     "bn256_df", "bn192_c2_h2", "bn256_h1"])
def test_hopper_gemm_fast_variants_match_torch(torch, m, n, k, dtype, b_layout, variant):
    """Every variant scripts/gemm-gpu times, for C = A·Bᵀ (B N×K) and C = A·B (B K×N)."""
    needs_sm90()
    if variant in os.environ.get("NANOCUDA_GEMM_SKIP_VARIANTS", "").split(","):
        pytest.skip(f"{variant} hung in scripts/gemm-gpu's smoke run (NANOCUDA_GEMM_SKIP_VARIANTS)")
    example = fast_gemm_example()
    key = (variant, b_layout)
    if key not in _variant_gemms:
        _variant_gemms[key] = example.HopperGemm(b_layout=b_layout, **example.VARIANTS[variant])
    g = _variant_gemms[key]
    dt = getattr(torch, dtype)
    for _ in range(2):  # fresh inputs each time: a race shows as a moving error
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(*((k, n) if b_layout == "kn" else (n, k)), device="cuda", dtype=dt)
        c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
        g(a, b, out=c)
        torch.cuda.synchronize()
        assert not torch.isnan(c).any(), "every element is written"
        ref = torch.matmul(a.double(), b.double() if b_layout == "kn" else b.double().T)
        err = ((c.double() - ref).norm() / ref.norm()).item()
        assert err < (1e-3 if dtype == "float16" else 6e-3), err


@pytest.mark.parametrize("tma_store", [False, True])
def test_hopper_gemm_fast_a_b_writes_nothing_outside_c(torch, tma_store):
    needs_sm90()
    example = fast_gemm_example()
    m, n, k = 200, 72, 40
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    big = torch.full((m + 300, n), 7.0, device="cuda", dtype=torch.bfloat16)
    c = big[:m]  # the rows after it must stay untouched (predicated stores, clipped TMA stores)
    example.HopperGemm(b_layout="kn", tma_store=tma_store)(a, b, out=c)
    torch.cuda.synchronize()
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2, atol=5e-2)
    assert bool((big[m:] == 7.0).all())


def test_hopper_gemm_fast_writes_nothing_outside_c(torch):
    needs_sm90()
    example = fast_gemm_example()
    m, n, k = 200, 72, 40
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, device="cuda", dtype=torch.float16)
    big = torch.full((m + 300, n), 7.0, device="cuda", dtype=torch.float16)
    c = big[:m]  # the rows after it must stay untouched by the predicated stores
    example.gemm(a, b, out=c)
    torch.cuda.synchronize()
    torch.testing.assert_close(c.float(), a.float() @ b.float().T, rtol=2e-3, atol=2e-2)
    assert bool((big[m:] == 7.0).all())


def test_hopper_gemm_fast_rejects_mixed_dtypes(torch):
    needs_sm90()
    example = fast_gemm_example()
    a = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="both fp16 or both bf16"):
        example.gemm(a, a.bfloat16())
    with pytest.raises(ValueError, match=r"must share K \(b is K×N\)"):
        example.matmul(a, torch.randn(32, 64, device="cuda", dtype=torch.float16))
    with pytest.raises(ValueError, match="out must be a contiguous"):
        example.gemm(a, a, out=torch.empty(64, 128, device="cuda", dtype=torch.float16)[:, ::2])


@pytest.mark.parametrize("script", ["run_saxpy.py", "run_square.py", "run_matmul.py", "run_hopper_gemm.py",
                                    "run_hopper_gemm_fast.py"])
def test_python_caller_runs(script):
    if script.startswith("run_hopper_gemm"):
        needs_sm90()
    r = subprocess.run([sys.executable, str(KERNELS / script)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "correct" in r.stdout
