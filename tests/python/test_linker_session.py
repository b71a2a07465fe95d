"""Linker's nvJitLink session (cuda.core's Linker.handle and init-time checks), CPU only: nvJitLink needs no GPU."""

import inspect

import pytest

from nanocuda import CompileError, Linker, LinkerOptions, Program, ProgramOptions

ARCH = "sm_90"
RDC = ProgramOptions(arch=ARCH, relocatable_device_code=True)


def _objects():
    caller = Program('extern "C" __device__ int inc(int);\n'
                     'extern "C" __global__ void k(int* p) { p[0] = inc(p[0]); }', "c++", RDC).compile("ptx")
    callee = Program('extern "C" __device__ int inc(int x) { return x + 1; }', "c++", RDC).compile("ptx")
    return caller, callee


def test_handle_is_the_session_link_completes():
    linker = Linker(*_objects(), options=LinkerOptions(arch=ARCH, name="both"))
    handle = linker.handle
    assert isinstance(handle, int) and handle != 0
    assert linker.handle == handle  # the same open session until link() completes it
    out = linker.link("cubin")
    assert out.code_type == "cubin" and out.code[:4] == b"\x7fELF" and out.name == "both"
    # A completed session is gone; the next link() opens a new one.
    assert linker.link("cubin").code[:4] == b"\x7fELF"
    linker.close()
    assert linker.is_closed and linker.handle == 0
    with pytest.raises(ValueError, match="Linker.link: the linker is closed"):
        linker.link("cubin")


def test_bad_arch_fails_at_construction_with_the_log():
    with pytest.raises(CompileError) as info:
        Linker(*_objects(), options=LinkerOptions(arch="99", ptx=True))
    assert "sm_99" in " ".join(info.value.options)


def test_error_log_after_a_failed_link():
    caller, _ = _objects()
    linker = Linker(caller, options=LinkerOptions(arch=ARCH))
    with pytest.raises(CompileError, match="inc"):
        linker.link("cubin")
    log = linker.get_error_log()
    assert isinstance(log, str) and "inc" in log
    linker.close()
    assert linker.get_error_log() == log  # closing keeps the logs


def test_ptx_after_a_cubin_session_opens_a_fitting_one():
    opts = ProgramOptions(arch=ARCH, relocatable_device_code=True, link_time_optimization=True)
    a = Program('extern "C" __device__ int inc(int x) { return x + 1; }', "c++", opts).compile("ltoir")
    b = Program('extern "C" __device__ int inc(int);\n'
                'extern "C" __global__ void k(int* p) { p[0] = inc(p[0]); }', "c++", opts).compile("ltoir")
    linker = Linker(a, b, options=LinkerOptions(arch=ARCH))
    assert b".entry k" in linker.link("ptx").code


def test_which_backend_is_a_classmethod():
    assert isinstance(inspect.getattr_static(Linker, "which_backend"), classmethod)
    assert Linker.which_backend() == "nvJitLink"
    assert Linker(*_objects(), options=LinkerOptions(arch=ARCH)).which_backend() == "nvJitLink"


def test_link_errors_are_cuda_bindings_nvjitlink_errors_where_imported(monkeypatch):
    # cuda.core raises cuda.bindings.nvjitlink.nvJitLinkError; where a program imported that
    # module, nanocuda's CompileError from the Linker is one too (nanocuda never imports it).
    import sys
    import types

    class nvJitLinkError(Exception):
        def __init__(self, status):
            self.status = status
            super().__init__(f"status {status}")

    fake = types.ModuleType("cuda.bindings.nvjitlink")
    fake.nvJitLinkError = nvJitLinkError
    monkeypatch.setitem(sys.modules, "cuda.bindings.nvjitlink", fake)
    with pytest.raises(nvJitLinkError) as info:
        Linker(*_objects(), options=LinkerOptions(arch="99", ptx=True))
    assert isinstance(info.value, CompileError) and "sm_99" in " ".join(info.value.options)
    caller, _ = _objects()
    with pytest.raises(nvJitLinkError):
        Linker(caller, options=LinkerOptions(arch=ARCH)).link("cubin")
    # NVRTC's errors stay plain CompileErrors.
    with pytest.raises(CompileError) as nvrtc:
        Program("this is not C++", "c++", ProgramOptions(arch=ARCH)).compile("ptx")
    assert not isinstance(nvrtc.value, nvJitLinkError)
    monkeypatch.delitem(sys.modules, "cuda.bindings.nvjitlink")
    with pytest.raises(CompileError) as plain:
        Linker(caller, options=LinkerOptions(arch=ARCH)).link("cubin")
    assert type(plain.value) is CompileError
