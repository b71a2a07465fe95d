"""The torch C ABI reader without torch: against a stand-in libtorch (fake_torch_abi.c, built
here) it reads tensors through aoti_torch_* in either object layout, hands what it does not
handle to the exchange function, and stays off, saying why, on any missing symbol, unknown
layout or answer that differs from the exchange function's."""

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import textwrap

import pytest

from nanocuda import torch_bridge
from testing_hooks import hooks

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def fake_torch(tmp_path_factory):
    """fake_torch_abi built three ways: folder by variant."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("needs a C compiler to build tests/python/fake_torch_abi.c")
    hooks.read_tensor  # the children use it: skip where the build has no test hooks
    out = {}
    for variant, flags in (("thpvariable", []), ("maybe_owned", ["-DFAKE_MAYBE_OWNED"]),
                           ("no_strides", ["-DFAKE_NO_STRIDES"])):
        folder = tmp_path_factory.mktemp(variant)
        subprocess.run([cc, "-shared", "-fPIC", "-O1", f"-I{sysconfig.get_paths()['include']}",
                        *flags, "-o", str(folder / "fake_torch_abi.so"),
                        str(HERE / "fake_torch_abi.c")], check=True)
        out[variant] = str(folder)
    return out


PRELUDE = """
import sys
sys.path[:0] = [{folder!r}, {tests!r}]
import nanocuda, fake_torch_abi as ft
from nanocuda import torch_bridge as b, _nanocuda
from testing_hooks import hooks
T = ft.Tensor
kind = lambda: _nanocuda._internal.tensor_reader_kind(T)
def probes():
    ts = [T(4096, (6, 5), (5, 1), 6), T(4096 + 28, (3, 4), (1, 5), 6), T(8192, (), (), 5),
          T(0, (0, 3), (3, 1), 4), T(16, (4,), (1,), 11), T(64, (2, 3), (0, 1), 15)]
    return [(t, t._cdata) for t in ts]
LIBS = ["/nonexistent/libtorch_cpu.so", ft.__file__]
"""


def run(folder: str, code: str) -> str:
    prelude = PRELUDE.format(folder=folder, tests=str(HERE))
    out = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=120, cwd="/tmp",
                         env={k: v for k, v in os.environ.items() if k != "NANOCUDA_TORCH_ABI"})
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout + out.stderr
    return out.stdout


@pytest.mark.parametrize("layout", ["thpvariable", "maybe_owned"])
def test_reads_through_the_c_abi_in_either_layout(fake_torch, layout):
    run(fake_torch[layout], """
        hooks.read_tensor(T(0, (1,), (1,), 6))  # not a torch type: the first-sight hook ignores it
        assert kind() == "exchange"
        assert b._try_abi((T,), LIBS, probes()), b._abi_why
        assert kind() == "abi" and "checked" in b._abi_why
        t = T(0x7f0000001000, (64, 48), (1, 64), 5, 1, 1)  # cuda:1, fp16, transposed
        calls = ft.exchange_calls()
        got = hooks.read_tensor(t)
        assert ft.exchange_calls() == calls, "read by the exchange function, not the C ABI"
        assert got == {"address": 0x7f0000001000, "device": (2, 1), "dtype": (2, 16, 1),
                       "shape": (64, 48), "strides": (1, 64)}, got
        assert hooks.read_tensor(T(32, (), (), 15))["dtype"] == (4, 16, 1)  # 0-d bf16
        # Complex (conjugate bits are invisible to the ABI), other devices and unknown dtypes
        # are torch's own function's to answer, errors included.
        assert hooks.read_tensor(T(64, (3,), (1,), 9))["dtype"] == (5, 64, 1)
        assert hooks.read_tensor(T(64, (3,), (1,), 6, 7))["device"] == (1, 0)
        try:
            hooks.read_tensor(T(64, (3,), (1,), 13))
            raise AssertionError("no error")
        except BufferError as e:
            assert "unsupported dtype" in str(e)
        assert ft.exchange_calls() == calls + 3
        b.disable()
        assert kind() == "exchange"
        assert b._try_abi((T,), [], [])  # once ready, installs again with no new check
        assert kind() == "abi"
        print("ok")
    """)


@pytest.mark.parametrize("layout", ["thpvariable", "maybe_owned"])
def test_plain_impls_skip_the_layout_call_and_other_classes_keep_it(fake_torch, layout):
    # An impl of the class every probe has (torch's plain TensorImpl) is strided: no layout
    # call; an impl of another class (nested, sparse, ...) is asked, and torch's own function
    # answers what is not strided, errors included.
    run(fake_torch[layout], """
        assert b._try_abi((T,), LIBS, probes()), b._abi_why
        before = ft.abi_calls()
        assert hooks.read_tensor(T(4096, (2, 3), (3, 1), 6, 1, 0))["shape"] == (2, 3)
        assert ft.abi_calls()["layout"] == before["layout"], "a plain impl needs no layout call"
        got = hooks.read_tensor(T(4096, (2, 3), (1, 2), 6, 1, 0, 0, 1))  # another dense class
        assert got["strides"] == (1, 2) and ft.abi_calls()["layout"] == before["layout"] + 1
        calls = ft.exchange_calls()
        try:
            hooks.read_tensor(T(4096, (2, 3), (3, 1), 6, 1, 0, 1))  # not strided
            raise AssertionError("no error")
        except BufferError as e:
            assert "sparse" in str(e)
        assert ft.exchange_calls() == calls + 1
        print("ok")
    """)


def test_probes_of_two_classes_leave_every_call_in(fake_torch):
    run(fake_torch["thpvariable"], """
        other = T(4096, (2,), (1,), 6, 0, 0, 0, 1)
        assert b._try_abi((T,), LIBS, probes() + [(other, other._cdata)]), b._abi_why
        before = ft.abi_calls()["layout"]
        assert hooks.read_tensor(T(4096, (2, 3), (3, 1), 6, 1, 0))["strides"] == (3, 1)
        assert ft.abi_calls()["layout"] == before + 1
        print("ok")
    """)


@pytest.mark.parametrize("variant,lies,libs,why", [
    ("thpvariable", (0, 1), "LIBS", "object layout is not one nanocuda knows"),
    ("maybe_owned", (0, 1), "LIBS", "object layout is not one nanocuda knows"),
    ("thpvariable", (1, 0), "LIBS", "differs from torch's DLPack exchange on probe 0"),
    ("no_strides", (0, 0), "LIBS", "libtorch lacks aoti_torch_get_strides"),
    ("thpvariable", (0, 0), "LIBS[:1]", "no libtorch is loaded"),
])
def test_stays_with_the_exchange_api_and_says_why(fake_torch, variant, lies, libs, why):
    run(fake_torch[variant], f"""
        ft.set_lies(*{lies!r})
        assert not b._try_abi((T,), {libs}, probes())
        assert {why!r} in b._abi_why, b._abi_why
        assert kind() == "exchange" and not _nanocuda._internal.torch_abi_ready()
        calls = ft.exchange_calls()
        hooks.read_tensor(T(4096, (2,), (1,), 6))
        assert ft.exchange_calls() == calls + 1
        print("ok")
    """)


def test_bad_probes_and_calls_are_refused(fake_torch):
    run(fake_torch["thpvariable"], """
        for probes_ in ([1], [(1, 2)], [(T(0, (1,), (1,), 6),)]):
            try:
                _nanocuda._internal.torch_abi_prepare(T, [], probes_)
                raise AssertionError("accepted")
            except TypeError as e:
                assert "torch_abi_prepare: each probe must be a (fake_torch_abi.Tensor, _cdata) pair" in str(e)
        try:
            _nanocuda._internal.torch_abi_install(T)
            raise AssertionError("accepted")
        except ValueError as e:
            assert "not ready" in str(e)
        print("ok")
    """)


@pytest.mark.needs_torch
def test_real_torch_cpu_tensors_read_as_the_exchange_api_reads_them():
    hooks.read_tensor  # the child calls it: skip where the build has no test hooks
    code = """
        import sys, nanocuda
        from nanocuda import torch_bridge as b
        from testing_hooks import hooks
        assert "torch" not in sys.modules, "import nanocuda imported torch"
        import torch
        x = torch.arange(30.0).reshape(5, 6)
        v = nanocuda.StridedMemoryView.from_dlpack(x[1:, 2:], -1)
        assert (v.ptr, v.shape, v.strides) == (x[1:, 2:].data_ptr(), (4, 4), (6, 1))  # read now
        assert b.status()["reader"] == "abi", b.status()  # the first torch tensor readied it
        def read(t):
            try:
                return hooks.read_tensor(t)
            except Exception as e:
                return type(e).__name__ + str(e).splitlines()[0]
        for t in (x, x[1:, 2:].t(), torch.tensor(2, dtype=torch.int8), torch.empty(0, 4),
                  torch.nn.Parameter(torch.zeros(3)), torch.zeros(2, 3, dtype=torch.bool),
                  torch.zeros(4, dtype=torch.float8_e5m2), torch.zeros(3, dtype=torch.complex64).conj(),
                  torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last),
                  torch.randn(4, 4).to_sparse()):
            b.select("exchange")
            expected = read(t)
            b.select("abi")
            assert read(t) == expected, (t, expected)
        print("ok")
    """
    out = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r})\n" +
                          textwrap.dedent(code)], capture_output=True, text=True, timeout=300, cwd="/tmp",
                         env={k: v for k, v in os.environ.items()
                              if k not in ("NANOCUDA_TORCH_ABI", "NANOCUDA_TORCH_BRIDGE")} | {"NANOCUDA_TORCH_BRIDGE": "0"})
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout + out.stderr


def test_select_and_status_without_torch():
    with pytest.raises(ValueError, match="reader must be 'abi', 'bridge' or 'exchange'"):
        torch_bridge.select("fast")
    if "torch" not in sys.modules:
        assert torch_bridge.status() == {"reader": "exchange", "why": "torch is not imported"}


def test_launch_slots_read_only_the_pointer_and_checks_still_see_the_geometry(fake_torch, mock_libcuda):
    # A Launcher's pointer slot reads address, device and dtype (read_pointer); a slot with
    # dtype/contiguity checks (launcher_require) reads the sizes and strides as well.
    from mock_run import run_on_mock

    run_on_mock(mock_libcuda, """
        class Tensor(T):  # torch.Tensor's Python face, as nanocuda detects it
            data_ptr = get_device = __dlpack__ = lambda self: None
        probe = lambda ts: [(t, t._cdata) for t in ts]
        assert b._try_abi((Tensor,), LIBS, probe([Tensor(4096, (6, 5), (5, 1), 6),
                                                  Tensor(64, (2, 3), (0, 1), 15)])), b._abi_why
        k = nanocuda.compile('extern "C" __global__ void k(float* a, float* b, float* c, int n) {}',
                             arch="90").get_kernel("k")
        run = k.bind(nanocuda.LaunchConfig(grid=1, block=32), stream=nanocuda.Stream.legacy(nanocuda.Device(0)))
        f32 = lambda addr, strides=(64, 1), dtype=6, dev=(1, 0): Tensor(addr, (64, 64), strides, dtype, *dev)
        c = f32(0x7F0000400000)
        go = lambda x, y: run(x, y, c, 4)
        calls, abi = ft.exchange_calls(), ft.abi_calls()
        go(f32(0x7F0000100000), f32(0x7F0000200000, (1, 64)))  # no checks: strides unread
        assert ft.exchange_calls() == calls, "read by the exchange function, not the C ABI"
        assert ft.abi_calls() == abi, "plain impls: no layout call, no nested-tensor sizes call"
        raises(lambda: go(f32(0x7F0000100000), Tensor(0x7F0000300000, (3,), (1,), 6, 1, 0, 1)),
               BufferError, "sparse")  # not strided: torch's own error
        calls += 1
        go(f32(0x7F0000100000), Tensor(0x7F0000300000, (3,), (1,), 9, 1, 0))  # complex: torch's own
        assert ft.exchange_calls() == calls + 1
        raises(lambda: go(f32(0x7F0000100000, dev=(0, 0)), f32(0x7F0000200000)), ValueError, "parameter 0")
        # a nested tensor (data, strided layout, sizes refused): torch's own error, never its pointer
        raises(lambda: go(f32(0x7F0000100000), Tensor(0x7F0000300000, (-1, 4), (4, 1), 6, 1, 0)),
               BufferError, "nested")
        calls += 1
        _nanocuda._internal.launcher_require(run, 1, [2 | 32 << 8 | 1 << 16], True)
        go(f32(0x7F0000100000), f32(0x7F0000200000))
        raises(lambda: go(f32(0x7F0000100000), f32(0x7F0000200000, (1, 64))), ValueError,
               "parameter 1", "contiguous")
        raises(lambda: go(f32(0x7F0000100000), f32(0x7F0000200000, dtype=5)), TypeError,
               "parameter 1", "dtype")
        assert ft.exchange_calls() == calls + 1
        print("ok")
    """, prelude=PRELUDE.format(folder=fake_torch["thpvariable"], tests=str(HERE)), version="13.0")
