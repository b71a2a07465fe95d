"""Both torch readers against the real torch on the GPU machine: the C ABI reader (no build) and
the compiled bridge each report exactly what torch's own DLPack exchange function reports for
every kind of tensor, launches and TensorMap.tiled read tensors through them, and a new process
picks each up by itself."""

import os
import subprocess
import sys

import pytest

import nanocuda
from testing_hooks import hooks

pytestmark = [pytest.mark.gpu, pytest.mark.needs_torch]


@pytest.fixture(scope="module", params=["abi", "bridge"])
def reader(request):
    """The torch_bridge module with request.param selected as torch.Tensor's reader."""
    from nanocuda import torch_bridge

    torch_bridge.select(request.param)
    assert torch_bridge.status()["reader"] == request.param, torch_bridge.status()
    yield request.param
    torch_bridge.disable()
    assert torch_bridge.status()["reader"] == "exchange", torch_bridge.status()


def _tensors(reader):
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
    if reader != "abi":  # the rest: what the C ABI reader decides on by itself
        return
    yield "requires_grad", torch.randn(8, device="cuda", requires_grad=True)
    yield "non-leaf view", torch.randn(8, 8, device="cuda", requires_grad=True)[2:, 1:]
    for dt in (torch.uint16, torch.uint32, torch.uint64):
        yield str(dt), torch.zeros(5, 3, dtype=dt, device="cuda")
    yield "float8_e5m2", torch.zeros(4, dtype=torch.float8_e5m2, device="cuda")
    yield "pinned cpu", torch.randn(3, 4).pin_memory()
    yield "channels_last", torch.randn(2, 3, 4, 5, device="cuda").to(memory_format=torch.channels_last)
    yield "neg view (torch's own function decides)", torch.randn(4, dtype=torch.complex64, device="cuda").conj().imag
    yield "sparse (torch's own function decides)", torch.randn(4, 4, device="cuda").to_sparse()
    yield "nested (torch's own function decides)", torch.nested.nested_tensor(
        [torch.zeros(2, 3, device="cuda"), torch.zeros(4, 3, device="cuda")])
    if torch.cuda.device_count() > 1:
        yield "cuda:1", torch.zeros(4, device="cuda:1")


def _read(t, first_line):
    try:
        return hooks.read_tensor(t)
    except Exception as e:  # noqa: BLE001 - the error itself is compared (not torch's C++ frames)
        return f"{type(e).__name__}: {str(e).splitlines()[0] if first_line else e}"


def test_reader_reports_what_the_exchange_api_reports(reader):
    from nanocuda import torch_bridge

    for name, t in _tensors(reader):
        torch_bridge.select("exchange")
        expected = _read(t, reader == "abi")
        torch_bridge.select(reader)
        got = _read(t, reader == "abi")
        if isinstance(expected, dict) and expected["strides"] is None:
            # Compact tensors may omit strides; our readers always give them.
            got = dict(got, strides=None) if isinstance(got, dict) else got
        assert got == expected, (reader, name)


def test_launches_read_tensors_through_the_reader(reader):
    import torch

    code = nanocuda.compile(r'''
    extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) c[i] = a[i] + b[i];
    }''')
    stream = nanocuda.Stream()
    launcher = code.get_kernel("add").bind(nanocuda.LaunchConfig(grid=4, block=256), stream=stream)
    base = torch.rand(1100, device="cuda")
    a, b = base[0:1000], base[100:1100]
    c = torch.empty(1000, device="cuda")
    if reader == "abi":  # a Parameter (a Tensor subclass) as well
        c = torch.nn.Parameter(c, requires_grad=False)
    torch.cuda.synchronize()
    launcher(a, b, c, 1000)  # offset views: the pointers must include the storage offset
    stream.sync()
    assert torch.equal(c, a + b)
    with pytest.raises(ValueError, match="expected device memory.*the CPU"):
        launcher(a, b.cpu(), c, 1000)


def test_launch_slots_refuse_what_the_exchange_api_refuses(reader):
    # A pointer slot reads less than a full read (the C ABI reader skips calls for plain
    # impls): its answer to each odd tensor kind must still be the exchange API's.
    import torch

    from nanocuda import torch_bridge

    k = nanocuda.compile('extern "C" __global__ void k(float* a, int n) {}').get_kernel("k")
    odd = {"conj": torch.randn(4, dtype=torch.complex64, device="cuda").conj(),
           "sparse": torch.randn(4, 4, device="cuda").to_sparse(),
           "nested": torch.nested.nested_tensor([torch.zeros(2, device="cuda"), torch.zeros(3, device="cuda")]),
           "cpu": torch.randn(3), "plain": torch.zeros(3, device="cuda")}
    for name, t in odd.items():
        outcome = {}
        for r in ("exchange", reader):
            torch_bridge.select(r)
            run = k.bind(nanocuda.LaunchConfig(grid=1, block=1), stream=nanocuda.Stream())  # a fresh slot
            try:
                run(t, 1)
                outcome[r] = "launched"
            except Exception as e:  # noqa: BLE001 - the error itself is compared
                outcome[r] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
        assert outcome[reader] == outcome["exchange"], (name, outcome)
    torch.cuda.synchronize()


def test_tensor_maps_through_the_reader_match(reader):
    import torch

    from nanocuda import TensorMap, torch_bridge

    x = torch.randn(256, 192, device="cuda").half()[8:, 64:]  # offset, padded rows
    maps = {}
    for r in ("exchange", reader):
        torch_bridge.select(r)
        hooks.tiled_memo_clear()
        maps[r] = TensorMap.tiled(x, (64, 64), swizzle=128)
    assert bytes(maps[reader]) == bytes(maps["exchange"])
    assert maps[reader].geometry == maps["exchange"].geometry


def _child(code, **env):
    hooks.read_tensor  # the child calls it: skip here where the build has no test hooks
    environ = {k: v for k, v in os.environ.items() if k not in ("NANOCUDA_TORCH_ABI", "NANOCUDA_TORCH_BRIDGE")}
    environ.update({k: v for k, v in env.items() if v is not None})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ,
                          check=True).stdout


@pytest.mark.parametrize("env,expected", [(None, "abi"), ("0", "exchange")])
def test_a_new_process_reads_through_the_abi_with_no_setup(env, expected):
    out = _child("import sys, nanocuda, nanocuda.torch_bridge as b\n"
                 "assert 'torch' not in sys.modules\n"
                 "import torch\n"
                 "t = torch.zeros(4, device='cuda')\n"
                 "nanocuda._nanocuda._testing.read_tensor(t)\n"
                 "s = b.status()\n"
                 "print(s['reader'], '|', s['why'])\n",
                 NANOCUDA_TORCH_BRIDGE="0",  # a bridge built by another test must not win
                 NANOCUDA_TORCH_ABI=env)
    assert out.split(" | ")[0] == expected, out


@pytest.mark.parametrize("env,expected", [(None, "True"), ("0", "False")])
def test_a_built_bridge_loads_itself_in_new_processes(env, expected):
    # Built (or found) here; a new process picks it up at its first torch tensor, unless
    # NANOCUDA_TORCH_BRIDGE=0.
    from nanocuda import torch_bridge

    torch_bridge.enable()
    torch_bridge.disable()
    out = _child("import torch, nanocuda, nanocuda.torch_bridge as b\n"
                 "t = torch.zeros(4, device='cuda')\n"
                 "before = b.is_enabled()\n"
                 "nanocuda._nanocuda._testing.read_tensor(t)\n"
                 "print(before, b.is_enabled())\n",
                 NANOCUDA_TORCH_BRIDGE=env)
    assert out.split() == ["False", expected]
