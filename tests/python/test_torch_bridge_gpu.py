"""nanocuda.torch_bridge on the GPU machine: built against the installed torch, it must report
exactly what torch's own DLPack exchange function reports, for every kind of tensor, and hand
the cases it does not handle to that function."""

import pytest

import nanocuda
from testing_hooks import hooks

pytestmark = [pytest.mark.gpu, pytest.mark.needs_torch]


@pytest.fixture(scope="module")
def bridge():
    from nanocuda import torch_bridge

    torch_bridge.enable()
    assert torch_bridge.is_enabled()
    yield torch_bridge
    torch_bridge.disable()
    assert not torch_bridge.is_enabled()


def _tensors():
    import torch

    x = torch.randn(64, 48, device="cuda")
    yield "contiguous", x
    yield "offset slice", x[3:, 5:]
    yield "transposed", x.t()
    yield "expanded (stride 0)", torch.randn(48, device="cuda").expand(64, 48)
    yield "0-d", torch.tensor(3.0, device="cuda")
    yield "empty", torch.empty(0, 7, device="cuda")
    yield "parameter", torch.nn.Parameter(torch.randn(8, device="cuda"))
    for dt in (torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.uint8,
               torch.int16, torch.int32, torch.int64, torch.bool, torch.complex64):
        yield str(dt), torch.zeros(5, 3, dtype=dt, device="cuda")
    yield "float8_e4m3fn", torch.zeros(4, dtype=torch.float8_e4m3fn, device="cuda")
    yield "cpu", torch.randn(3, 4)
    yield "conj view (torch's own function decides)", torch.randn(4, dtype=torch.complex64, device="cuda").conj()


def _read(t):
    try:
        return hooks.read_tensor(t)
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return f"{type(e).__name__}: {e}"


def test_bridge_reports_what_the_exchange_api_reports(bridge):
    from nanocuda import torch_bridge

    for name, t in _tensors():
        torch_bridge.disable()
        expected = _read(t)
        torch_bridge.enable()
        got = _read(t)
        if isinstance(expected, dict) and expected["strides"] is None:
            # Compact tensors may omit strides; the bridge always gives them.
            got = dict(got, strides=None) if isinstance(got, dict) else got
        assert got == expected, name


def test_launches_read_tensors_through_the_bridge(bridge):
    import torch

    code = nanocuda.compile(r'''
    extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) c[i] = a[i] + b[i];
    }''')
    stream = nanocuda.Stream()
    launcher = code.get_kernel("add").bind(nanocuda.LaunchConfig(grid=4, block=256), stream=stream)
    base = torch.rand(1100, device="cuda")
    a, b, c = base[0:1000], base[100:1100], torch.empty(1000, device="cuda")
    torch.cuda.synchronize()
    launcher(a, b, c, 1000)  # offset views: the pointers must include the storage offset
    stream.sync()
    assert torch.equal(c, a + b)
    with pytest.raises(ValueError, match="expected device memory.*the CPU"):
        launcher(a, b.cpu(), c, 1000)


def test_tensor_maps_from_the_bridge_match(bridge):
    import torch

    from nanocuda import TensorMap, torch_bridge

    x = torch.randn(256, 192, device="cuda").half()[8:, 64:]  # offset, padded rows
    maps = {}
    for on in (False, True):
        (torch_bridge.enable if on else torch_bridge.disable)()
        hooks.tiled_memo_clear()
        maps[on] = TensorMap.tiled(x, (64, 64), swizzle=128)
    assert bytes(maps[True]) == bytes(maps[False])
    assert maps[True].geometry == maps[False].geometry


@pytest.mark.parametrize("env,expected", [(None, "True"), ("0", "False")])
def test_a_built_bridge_loads_itself_in_new_processes(bridge, env, expected):
    # The module fixture built it; a new process picks it up at its first torch tensor,
    # unless NANOCUDA_TORCH_BRIDGE=0.
    import os
    import subprocess
    import sys

    hooks.read_tensor  # the child calls it: skip here where the build has no test hooks
    code = ("import torch, nanocuda, nanocuda.torch_bridge as b\n"
            "t = torch.zeros(4, device='cuda')\n"
            "before = b.is_enabled()\n"
            "nanocuda._nanocuda._testing.read_tensor(t)\n"
            "print(before, b.is_enabled())\n")
    environ = dict(os.environ)
    environ.pop("NANOCUDA_TORCH_BRIDGE", None)
    if env is not None:
        environ["NANOCUDA_TORCH_BRIDGE"] = env
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ,
                         check=True).stdout.split()
    assert out == ["False", expected]
