"""TensorMap on an sm_90+ GPU: TMA round trips checked against torch slicing, OOB fill,
replace_address, im2col, and byte-identity with the raw driver call.

Needs torch and the launch API (nanocuda.Program / nanocuda.launch); `_kernel` is the one
place that touches that API, so adapt it there if its spelling differs."""

import functools
import math
import pathlib

import pytest

import nanocuda
from nanocuda import TensorMap
from testing_hooks import hooks

pytestmark = [pytest.mark.gpu, pytest.mark.needs_torch]
ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = (ROOT / "tests" / "kernels" / "tma_roundtrip.cu").read_text()


def _require_launch_api():
    if not hasattr(nanocuda, "launch") or not hasattr(nanocuda, "Program"):
        pytest.skip("needs the launch API (nanocuda.Program and nanocuda.launch)")


@functools.lru_cache(maxsize=None)
def _module():
    return nanocuda.compile(SOURCE, arch="sm_90a", include_dirs=[ROOT / "include"])


def _kernel(name):
    _require_launch_api()
    import torch

    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("TMA needs compute capability 9.0+")
    return _module().get_kernel(name)


def _launch(name, grid, shared_mem, *args):
    import torch

    stream = torch.cuda.current_stream()
    nanocuda.launch(stream, nanocuda.LaunchConfig(grid=grid, block=128, shared_mem=shared_mem),
                    _kernel(name), *args)
    torch.cuda.synchronize()


def _roundtrip(src, dst, box, swizzle, raw=None, **kw):
    """Copies src to dst one box per block through shared memory; returns the raw tiles."""
    import torch

    ms = TensorMap.tiled(src, box, swizzle=swizzle, **kw)
    md = TensorMap.tiled(dst, box, swizzle=swizzle, **kw)
    rank = src.dim()
    tiles = [math.ceil(s / b) for s, b in zip(src.shape, box)][::-1]  # innermost first
    boxes = list(box)[::-1]
    nbytes = math.prod(box) * src.element_size()
    ntiles = math.prod(tiles)
    out = torch.zeros(ntiles * nbytes, dtype=torch.uint8, device="cuda") if raw else None
    pad = [1] * (5 - rank)
    _launch("tma_roundtrip", ntiles, nbytes + 1024, ms, md, rank, *(tiles + pad), *(boxes + pad),
            nbytes, out.data_ptr() if out is not None else 0)
    return ms, md, out


def _random(shape, dtype):
    import torch

    if dtype.is_floating_point:
        return torch.randn(shape, device="cuda").to(dtype)
    return torch.randint(-100, 100, shape, device="cuda", dtype=dtype)


DTYPES = ["float16", "bfloat16", "float32", "int8"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("swizzle", ["none", 32, 64, 128])
def test_roundtrip_2d_every_swizzle(dtype, swizzle):
    import torch

    dt = getattr(torch, dtype)
    esize = torch.empty(0, dtype=dt).element_size()
    inner = (swizzle if swizzle != "none" else 64) // esize
    src = _random((96, 4 * inner), dt)
    dst = torch.zeros_like(src)
    _roundtrip(src, dst, (32, inner), swizzle)
    assert torch.equal(dst, src)


@pytest.mark.parametrize("rank", [2, 3, 4, 5])
@pytest.mark.parametrize("dtype", DTYPES)
def test_roundtrip_ranks(rank, dtype):
    import torch

    dt = getattr(torch, dtype)
    inner = 64 // torch.empty(0, dtype=dt).element_size()
    shape = (3, 5, 4, 6, 2 * inner)[5 - rank:]
    box = (2, 3, 2, 4, inner)[5 - rank:]
    src = _random(shape, dt)
    dst = torch.zeros_like(src)
    _roundtrip(src, dst, box, 64)
    assert torch.equal(dst, src)


@pytest.mark.parametrize("oob_fill", ["zero", "nan"])
def test_edge_tiles_fill_out_of_bounds(oob_fill):
    import torch

    src = _random((40, 72), torch.float32)  # not a multiple of the 32x32 box
    dst = torch.zeros_like(src)
    _, _, raw = _roundtrip(src, dst, (32, 32), "none", raw=True, oob_fill=oob_fill)
    assert torch.equal(dst, src)  # stores clip at the edge
    tiles = raw.view(torch.float32).view(2, 3, 32, 32)  # (tile row, tile col, box)
    corner = tiles[1, 2]  # rows 32..63, cols 64..95
    assert torch.equal(corner[:8, :8], src[32:40, 64:72])
    outside = torch.cat([corner[8:].flatten(), corner[:8, 8:].flatten()])
    if oob_fill == "zero":
        assert torch.all(outside == 0)
    else:
        assert torch.all(torch.isnan(outside))


def test_strided_view_with_padded_rows():
    import torch

    base = _random((64, 80), torch.float16)
    src = base[:, :64]  # rows of 160 bytes: a multiple of 16
    dst = torch.zeros(64, 64, dtype=torch.float16, device="cuda")
    _roundtrip(src, dst, (32, 64), 128)
    assert torch.equal(dst, src)


def test_replace_address_swaps_tensors():
    import torch

    a, b = _random((64, 64), torch.float16), _random((64, 64), torch.float16)
    dst = torch.zeros_like(a)
    ms, md, _ = _roundtrip(a, dst, (64, 64), 128)
    assert torch.equal(dst, a)
    before = bytes(ms)
    ms.replace_address(b)
    assert bytes(ms) != before and ms.address == b.data_ptr()
    _launch("tma_roundtrip", 1, 64 * 64 * 2 + 1024, ms, md, 2, 1, 1, 1, 1, 1, 64, 64, 1, 1, 1,
            64 * 64 * 2, 0)
    assert torch.equal(dst, b)
    # Replacing gives the same bytes as encoding at the new address.
    assert bytes(ms) == bytes(TensorMap.tiled(b, (64, 64), swizzle=128))


def test_im2col_load():
    import torch

    n, h, w, c = 2, 4, 8, 64
    x = _random((n, h, w, c), torch.float16)
    tm = TensorMap.im2col(x, pixels_per_column=h * w, channels_per_pixel=c, swizzle="none")
    nbytes = h * w * c * 2
    out = torch.zeros(nbytes, dtype=torch.uint8, device="cuda")
    _launch("tma_im2col_load", 1, nbytes + 1024, tm, 0, 0, 0, 1, 0, 0, nbytes, out.data_ptr())
    assert torch.equal(out.view(torch.float16).view(h * w, c), x[1].reshape(h * w, c))


def test_byte_identical_to_raw_driver_call():
    import torch

    x = torch.empty(512, 512, dtype=torch.float16, device="cuda")
    tm = TensorMap.tiled(x, (64, 64), swizzle=128)
    # cuda.h arguments, innermost first, computed independently here.
    raw = hooks.encode_tiled_raw(
        6, 2, x.data_ptr(), [512, 512], [1024], [64, 64], [1, 1], 0, 3, 2, 0)  # FLOAT16, 128B, L2_128B
    assert bytes(tm) == raw
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        return
    err, ref = cu.cuTensorMapEncodeTiled(
        cu.CUtensorMapDataType(6), 2, x.data_ptr(), [cu.cuuint64_t(512), cu.cuuint64_t(512)],
        [cu.cuuint64_t(1024)], [cu.cuuint32_t(64), cu.cuuint32_t(64)], [cu.cuuint32_t(1), cu.cuuint32_t(1)],
        cu.CUtensorMapInterleave(0), cu.CUtensorMapSwizzle(3), cu.CUtensorMapL2promotion(2),
        cu.CUtensorMapFloatOOBfill(0))
    assert int(err) == 0
    ref_bytes = bytes(ref.opaque) if not isinstance(ref.opaque, list) else b"".join(
        int(q).to_bytes(8, "little") for q in ref.opaque)
    assert bytes(tm) == ref_bytes


def test_remembered_geometry_gives_the_raw_driver_bytes():
    """TensorMap.tiled remembers the last geometry per thread: a known address reuses its
    descriptor and a new one swaps the address into a copy. Each result must equal a fresh
    raw encode of the same arguments, whichever path made it."""
    import torch

    core = hooks
    base = torch.zeros(600 * 512, dtype=torch.float16, device="cuda")
    p0 = base.data_ptr()

    def raw(ptr, rows=512):
        return core.encode_tiled_raw(6, 2, ptr, [512, rows], [1024], [64, 64], [1, 1], 0, 3, 2, 0)

    core.tiled_memo_clear()
    e0, s0, r0 = core.tiled_memo_stats()
    # 0: encode; 1: swap; 0: reuse; 2..5: swaps (the ring of 4 overflows); 1, 0: swaps again.
    for k in (0, 1, 0, 2, 3, 4, 5, 1, 0):
        tm = TensorMap.tiled_from_pointer(p0 + 256 * k, "float16", (512, 512), box=(64, 64), swizzle=128)
        assert bytes(tm) == raw(p0 + 256 * k), f"address +{256 * k}"
        assert tm.address == p0 + 256 * k
    assert core.tiled_memo_stats() == (e0 + 1, s0 + 7, r0 + 1)
    tm = TensorMap.tiled_from_pointer(p0, "float16", (256, 512), box=(64, 64), swizzle=128)
    assert bytes(tm) == raw(p0, rows=256)  # a new geometry: a full encode
    assert core.tiled_memo_stats() == (e0 + 2, s0 + 7, r0 + 1)
    # Through torch too, and a swapped descriptor moves the right data: _roundtrip encodes
    # src, then dst of the same geometry (a swap), and the kernel stores through dst's map.
    x, y = _random((128, 128), torch.float16), torch.zeros(128, 128, dtype=torch.float16, device="cuda")
    _roundtrip(x, y, (64, 64), 128)
    assert core.tiled_memo_stats() == (e0 + 3, s0 + 8, r0 + 1)
    assert torch.equal(y, x)


def test_bound_form_follows_new_tensors_and_new_geometry():
    """Kernel.bind(tensor_maps=...): tensors in, descriptors kept right as tensors change."""
    import torch

    kernel = _kernel("tma_roundtrip")
    box = (32, 64)  # fp16: a 128-byte inner row, 128B swizzle
    nbytes = 32 * 64 * 2

    def args(src, dst):
        tiles = [math.ceil(src.shape[1] / 64), math.ceil(src.shape[0] / 32)]
        return (src, dst, 2, *tiles, 1, 1, 1, 64, 32, 1, 1, 1, nbytes, 0)

    src = _random((96, 256), torch.float16)
    dst = torch.zeros_like(src)
    templates = {0: TensorMap.tiled(src, box, swizzle=128), 1: TensorMap.tiled(dst, box, swizzle=128)}
    stream = nanocuda.Stream.adopt(torch.cuda.current_stream())
    config = nanocuda.LaunchConfig(grid=12, block=128, shared_mem=nbytes + 1024)  # 12 tiles
    launch = kernel.bind(config, stream=stream, tensor_maps=templates)
    stats = hooks.launcher_map_stats

    launch(*args(src, dst))
    torch.cuda.synchronize()
    assert torch.equal(dst, src)
    assert stats(launch) == {0: (0, 0), 1: (0, 0)}  # the templates' own tensors: no work

    src2, dst2 = _random((96, 256), torch.float16), torch.zeros(96, 256, dtype=torch.float16, device="cuda")
    launch(*args(src2, dst2))  # same geometry, new memory: address swaps only
    torch.cuda.synchronize()
    assert torch.equal(dst2, src2)
    assert stats(launch) == {0: (0, 1), 1: (0, 1)}
    assert torch.equal(dst, src)  # the first pair was not touched

    dst.zero_()
    launch(*args(src, dst))  # back to the first pair: remembered descriptors, no driver call
    torch.cuda.synchronize()
    assert torch.equal(dst, src)
    assert stats(launch) == {0: (0, 1), 1: (0, 1)}

    src3 = _random((192, 128), torch.float16)  # new geometry, still 12 tiles
    dst3 = torch.zeros_like(src3)
    launch(*args(src3, dst3))
    torch.cuda.synchronize()
    assert torch.equal(dst3, src3)
    assert stats(launch) == {0: (1, 1), 1: (1, 1)}

    with pytest.raises(ValueError, match="parameter 0"):
        launch(*args(src3.cpu(), dst3))
    with pytest.raises(TypeError, match="tiled nanocuda.TensorMap"):
        kernel.bind(config, stream=stream, tensor_maps={0: src})
    with pytest.raises(ValueError, match="not a 128-byte CUtensorMap"):
        kernel.bind(config, stream=stream, tensor_maps={2: templates[0]})

