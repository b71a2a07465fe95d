"""Compile-option rules live in the C++ core (ProgramOptions::set, LinkerOptions::set,
backend_flags); Python reads them through the binding under Python names, with no driver."""

import pytest

import nanocuda
from nanocuda import LinkerOptions, ProgramOptions


def test_nanocudas_field_names_are_set_by_the_core():
    o = ProgramOptions(arch="90", fast_math=True, default_device=False, defines=["A=1"],
                       include_dirs="/opt/inc", extra_flags=["-Xfoo"])
    assert (o.fast_math, o.default_device, o.defines, o.include_dirs, o.extra_flags) == (
        True, False, ["A=1"], ["/opt/inc"], ["-Xfoo"])
    flags = [f.decode() for f in o.as_bytes("nvrtc", "cubin")]
    assert {"--use_fast_math", "-DA=1", "-I/opt/inc", "-Xfoo"} <= set(flags)


def test_a_field_name_with_a_value_of_the_wrong_kind_names_the_option():
    with pytest.raises(TypeError, match=r"ProgramOptions: .*fast_math"):
        ProgramOptions(fast_math="yes")


def test_unknown_names_are_compared_with_nanocudas_names_too():
    with pytest.raises(TypeError, match=r"unknown option 'fast_mat' \(did you mean 'fast_math'"):
        ProgramOptions(fast_mat=True)
    with pytest.raises(TypeError, match=r"LinkerOptions: unknown option 'ltoo' \(did you mean 'lto'"):
        LinkerOptions(ltoo=True)


def test_linker_field_names_are_set_by_the_core():
    o = LinkerOptions(arch="90", lto=True, extra_flags=["-Xbar"])
    assert o.link_time_optimization is True and o.extra_flags == ["-Xbar"]


def test_as_bytes_backends_come_from_the_core_under_the_python_name():
    o = ProgramOptions(arch="90")
    assert any(f == b"-arch=sm_90" for f in o.as_bytes("nvrtc"))
    with pytest.raises(ValueError, match=r"^ProgramOptions\.as_bytes: unknown backend 'clang': expected "
                                         r"'nvrtc', 'nvjitlink' or 'nvvm'") as e:
        o.as_bytes("clang")
    assert "::" not in str(e.value)
    assert isinstance(e.value, ValueError) and nanocuda.ProgramOptions is ProgramOptions
