"""cuda.core's compile/module rules that need no GPU: ObjectCode from files, option types, errors."""

import pytest

import nanocuda
from nanocuda import Kernel, Linker, LinkerOptions, ObjectCode, Program, ProgramOptions

KERNEL = 'extern "C" __global__ void k(int* p) { *p = 1; }'


def test_object_code_cannot_be_made_directly():
    with pytest.raises(RuntimeError, match=r"^ObjectCode objects cannot be instantiated directly\."):
        ObjectCode()


@pytest.mark.parametrize("as_path", [str, lambda p: p])
def test_code_made_from_a_file_is_its_path(tmp_path, as_path):
    cubin = Program(KERNEL, "c++", ProgramOptions(arch="sm_80")).compile("cubin")
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin.code)
    made = ObjectCode.from_cubin(as_path(path), symbol_mapping={"k": "k"})
    assert made.code == str(path) and bytes(made) == cubin.code
    assert made.symbol_mapping == {"k": "k"} and made.code_type == "cubin"
    named = ObjectCode.from_cubin(str(path), name="mine")
    assert named.name == "mine" and named.code == str(path)
    assert isinstance(ObjectCode.from_cubin(cubin.code).code, bytes)


@pytest.mark.parametrize("bad", ["not_an_int", 2.5, None, {"h": 1}, [1], (1,), 3j, b"\x01", {1}, object(), True])
def test_kernel_from_handle_refuses_what_is_not_a_handle(bad):
    with pytest.raises(TypeError, match="Kernel.from_handle: handle must be an int or a handle object"):
        Kernel.from_handle(bad)


def test_kernel_from_handle_refuses_a_bad_mod_and_a_null_handle():
    with pytest.raises(TypeError, match="mod must be a nanocuda.ObjectCode or None, got str"):
        Kernel.from_handle(1234, "not code")
    with pytest.raises(ValueError, match="the handle is 0"):
        Kernel.from_handle(0)
    with pytest.raises(ValueError, match="handle must be >= 0"):
        Kernel.from_handle(-1)


@pytest.mark.parametrize("opts", [
    {"time": True}, {"time": False}, {"time": "t.csv"}, {"create_pch": False}, {"use_pch": False},
    {"pch_dir": False}, {"fdevice_time_trace": False}, {"include_path": range(2)}, {"include_path": False},
    {"pre_include": False},
])
def test_options_take_cuda_core_s_value_types(opts):
    o = ProgramOptions(arch="sm_80", **opts)
    (name, value), = opts.items()
    if name == "include_path":
        assert o.include_path == ([] if value is False else [str(v) for v in value])
    elif name == "pre_include":
        assert o.pre_include == []
    else:
        assert getattr(o, name) == value


def test_nvrtc_spells_bool_path_options_as_cuda_core_does():
    flags = Program(KERNEL, "c++", ProgramOptions(arch="sm_80", time=True)).flags("cubin")
    assert "--time=True" in flags
    assert not any(f.startswith("--pre-include") for f in
                   Program(KERNEL, "c++", ProgramOptions(arch="sm_80", pre_include=False)).flags("cubin"))


def test_ptx_programs_turn_time_into_the_linkers_log_flag():
    p = Program(".version 8.0\n.target sm_80\n", "ptx", ProgramOptions(arch="sm_80", time="timing.csv"))
    assert "-time" in p.flags("cubin")
    p = Program(".version 8.0\n.target sm_80\n", "ptx", ProgramOptions(arch="sm_80", time=False))
    assert "-time" not in p.flags("cubin")


def test_a_path_option_still_refuses_numbers():
    with pytest.raises(TypeError, match="option 'create_pch' takes a str \\(a file name\\) or a bool"):
        ProgramOptions(create_pch=3)


def test_linker_errors_carry_cuda_core_s_wording():
    with pytest.raises(ValueError, match="At least one ObjectCode object must be provided"):
        Linker()
    for backend in ("driver", "invalid"):
        with pytest.raises(ValueError, match="only supports 'nvjitlink' backend"):
            LinkerOptions(arch="sm_80").as_bytes(backend)


def test_portable_default_arch_only_drops_the_suffix_of_the_device_default():
    # An arch that was set is used as given, for every target.
    p = Program(KERNEL, "c++", ProgramOptions(arch="sm_90a"))
    assert "-arch=compute_90a" in p.flags("ptx") and "-arch=sm_90a" in p.flags("cubin")
    assert "-arch=sm_90a" in p.flags("ltoir")
    assert nanocuda.ProgramOptions.option_names()  # the table is intact
