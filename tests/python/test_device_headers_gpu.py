"""The device headers (mbarrier, wgmma, warpgroup, cluster, multicast TMA, pdl) on the GPU."""

import pathlib

import pytest

import nanocuda

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNELS = ROOT / "tests" / "kernels" / "device_headers.cu"
pytestmark = [pytest.mark.gpu, pytest.mark.needs_torch]


@pytest.fixture(scope="module")
def torch():
    import torch as t

    return t


@pytest.fixture(scope="module")
def mod():
    major, minor = nanocuda.Device(0).compute_capability
    if (major, minor) != (9, 0):
        pytest.skip(f"the device headers' wgmma/setmaxnreg need sm_90a; device 0 is sm_{major}{minor}")
    return nanocuda.load(KERNELS, arch="sm_90a")


def launch(kernel, *args, **config):
    nanocuda.launch(nanocuda.workflow.default_stream(), nanocuda.LaunchConfig(**config), kernel.kernel, *args)


def test_mbarrier_phases(torch, mod):
    flags = torch.full((6,), -1, device="cuda", dtype=torch.int32)
    mod.mbarrier_phases(flags, grid=1, block=128)
    # fresh barrier: phase 0 pending, "parity 1" complete; then phases 0,1,0,1 each seen done.
    assert flags.tolist() == [0, 1, 10, 11, 10, 11]


@pytest.mark.parametrize("n", [64, 128, 256])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_wgmma_tile_matches_torch(torch, mod, n, dtype):
    dt = getattr(torch, dtype)
    a = torch.randn(64, 64, device="cuda", dtype=dt)
    b = torch.randn(n, 64, device="cuda", dtype=dt)
    d = torch.full((64, n), float("nan"), device="cuda")
    maps = (nanocuda.TensorMap.tiled(a, (64, 64), swizzle="128B"),
            nanocuda.TensorMap.tiled(b, (n, 64), swizzle="128B"))
    kernel = getattr(mod, f"wgmma_{'f16' if dtype == 'float16' else 'bf16'}_n{n}")
    kernel(*maps, d, grid=1, block=128, shared_mem=1024 + (64 + n) * 64 * 2)
    torch.cuda.synchronize()
    # Exact products of 16-bit inputs summed in fp32: tight against a float64 reference.
    torch.testing.assert_close(d.double(), a.double() @ b.double().T, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n", [64, 128, 256])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_wgmma_mn_major_b_matches_torch(torch, mod, n, dtype):
    """B stored K×N (N contiguous): [64][64] TMA boxes, desc_mn128 and the transpose bit."""
    dt = getattr(torch, dtype)
    a = torch.randn(64, 64, device="cuda", dtype=dt)
    b = torch.randn(64, n, device="cuda", dtype=dt)
    d = torch.full((64, n), float("nan"), device="cuda")
    maps = (nanocuda.TensorMap.tiled(a, (64, 64), swizzle="128B"),
            nanocuda.TensorMap.tiled(b, (64, 64), swizzle="128B"))
    kernel = getattr(mod, f"wgmma_{'f16' if dtype == 'float16' else 'bf16'}_n{n}_kn")
    kernel(*maps, d, grid=1, block=128, shared_mem=1024 + (64 + n) * 64 * 2)
    torch.cuda.synchronize()
    torch.testing.assert_close(d.double(), a.double() @ b.double(), rtol=1e-5, atol=1e-4)


def test_setmaxnreg_warpgroups(torch, mod):
    out = torch.full((256,), -1, device="cuda", dtype=torch.int32)
    mod.warpgroup_regs(out, grid=1, block=256)
    expect = list(range(128)) + [1000 + i for i in range(128)]
    assert out.tolist() == expect


@pytest.mark.parametrize("cluster", [2, 4])
def test_cluster_rank_size_and_distributed_shared_memory(torch, mod, cluster):
    blocks = 2 * cluster
    out = torch.full((3 * blocks,), -1, device="cuda", dtype=torch.int32)
    launch(mod.cluster_dsmem, out, grid=blocks // cluster, block=64, cluster=cluster)  # grid in clusters
    torch.cuda.synchronize()
    got = out.view(blocks, 3).tolist()
    for blk, (rank, size, peer) in enumerate(got):
        assert (rank, size) == (blk % cluster, cluster)
        assert peer == 100 + (rank + 1) % cluster


@pytest.mark.parametrize("cluster", [2, 4])
def test_tma_multicast_fills_every_block(torch, mod, cluster):
    rows = 16
    src = torch.randn(rows * cluster, 64, device="cuda", dtype=torch.float16)
    part = rows * 64 * 2
    out = torch.zeros(2 * cluster, part * cluster, device="cuda", dtype=torch.uint8)
    m = nanocuda.TensorMap.tiled(src, (rows, 64), swizzle="none")
    launch(mod.tma_multicast, m, rows, part, out, grid=2, block=128,
           shared_mem=1024 + part * cluster, cluster=cluster)
    torch.cuda.synchronize()
    expect = src.view(torch.uint8).reshape(-1)
    for blk in range(2 * cluster):
        assert torch.equal(out[blk], expect), f"block {blk}"


@pytest.mark.parametrize("cluster", [2, 4])
def test_remote_mbarrier_arrivals_release_writes(torch, mod, cluster):
    blocks = 2 * cluster
    out = torch.full((10 * blocks,), -1, device="cuda", dtype=torch.int32)
    launch(mod.cluster_arrive, out, grid=blocks // cluster, block=32, cluster=cluster)
    torch.cuda.synchronize()
    got = out.view(blocks, 10).tolist()
    for blk, row in enumerate(got):
        rank = blk % cluster
        assert row[:2] == [1, 1], f"block {blk}: both barriers completed"
        assert row[2:2 + cluster] == [1000 * q + rank for q in range(cluster)], f"block {blk}"


def test_pdl_dependent_sees_primary_writes(torch, mod):
    n = 1 << 20
    buf = torch.zeros(n, device="cuda", dtype=torch.int32)
    out = torch.zeros(n, device="cuda", dtype=torch.int32)
    for _ in range(3):
        buf.zero_()
        launch(mod.pdl_primary, buf, n, grid=264, block=256)
        launch(mod.pdl_dependent, buf, out, n, grid=264, block=256, pdl=True)
        torch.cuda.synchronize()
        assert torch.equal(out, 2 * torch.arange(1, n + 1, device="cuda", dtype=torch.int32))
