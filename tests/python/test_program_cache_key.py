"""make_program_cache_key for C++, PTX and NVVM, and Program.compile(cache=), without a GPU."""

import pytest

from nanocuda import ProgramOptions
from nanocuda.utils import InMemoryProgramCache, make_program_cache_key


def _key(**kw):
    base = dict(code="extern \"C\" __global__ void k() {}", code_type="c++", options=ProgramOptions(arch="sm_80"),
                target_type="cubin")
    base.update(kw)
    return make_program_cache_key(**base)


def _ptx_key(**opts):
    return _key(code=".version 8.0\n.target sm_80\n", code_type="ptx", options=ProgramOptions(arch="sm_80", **opts))


def test_key_is_32_bytes_and_deterministic():
    assert len(_key()) == 32 and _key() == _key()
    assert _key() != _key(code="extern \"C\" __global__ void j() {}")
    assert _key() != _key(options=ProgramOptions(arch="sm_90"))
    assert _key() != _key(target_type="ptx")
    assert _key() != _key(extra_digest=b"x")


@pytest.mark.parametrize("code_type, target", [("C++", "CUBIN"), ("Ptx", "cubin"), ("NVVM", "Ptx")])
def test_case_of_code_and_target_type_does_not_matter(code_type, target):
    code = {"c++": "void f() {}", "ptx": ".version 8.0", "nvvm": "ir"}[code_type.lower()]
    assert _key(code=code, code_type=code_type, target_type=target) == \
        _key(code=code, code_type=code_type.lower(), target_type=target.lower())


def test_ptx_keys_follow_linker_flags_only():
    assert _ptx_key() == _ptx_key(define_macro="X", std="c++20")  # NVRTC-only options
    assert _ptx_key(ptxas_options="-v") == _ptx_key(ptxas_options=["-v"]) == _ptx_key(ptxas_options=("-v",))
    assert _ptx_key(ptxas_options=[]) == _ptx_key()
    assert _ptx_key(debug=False) == _ptx_key()
    assert _ptx_key(ftz=True) != _ptx_key(ftz=False)
    assert _ptx_key(time=True) == _ptx_key(time="timing.csv")  # the linker's -time only logs
    assert _ptx_key(include_path="/usr/include") == _ptx_key()  # no extra_digest needed for PTX


def test_non_nvrtc_keys_ignore_name_expressions():
    ptx = dict(code=".version 8.0", code_type="ptx")
    assert _key(**ptx, name_expressions=("f", 3)) == _key(**ptx)


def test_nvvm_accepts_bytes_and_needs_a_digest_for_libdevice():
    nvvm = dict(code_type="nvvm", target_type="ptx")
    assert _key(code="ir", **nvvm) == _key(code=b"ir", **nvvm)
    with pytest.raises(ValueError, match="libdevice.*extra_digest"):
        _key(code="ir", options=ProgramOptions(arch="sm_80", use_libdevice=True), **nvvm)
    a = _key(code="ir", options=ProgramOptions(arch="sm_80", use_libdevice=True), extra_digest=b"a", **nvvm)
    assert a != _key(code="ir", options=ProgramOptions(arch="sm_80", use_libdevice=True), extra_digest=b"b", **nvvm)
    assert _key(code="ir", options=ProgramOptions(arch="sm_80", use_libdevice=False), **nvvm) == _key(code="ir", **nvvm)


@pytest.mark.parametrize("kw, exc, match", [
    ({"code_type": "fortran"}, ValueError, "'fortran' is not a valid SourceCodeType"),
    ({"target_type": "exe"}, ValueError, "target_type 'exe' is not valid for code_type 'c\\+\\+'"),
    ({"code_type": "ptx", "code": ".version 8.0", "target_type": "ltoir"}, ValueError, "not valid for code_type"),
    ({"code_type": "nvvm", "code": "ir", "target_type": "cubin"}, ValueError, "not valid for code_type"),
    ({"code": 5}, TypeError, "code must be a str"),
    ({"code": b"void f() {}"}, TypeError, "code must be str for code_type 'c\\+\\+'"),
    ({"name_expressions": ("ok", 3)}, TypeError, "name_expressions must hold str or bytes, got int"),
    ({"name_expressions": (bytearray(b"f"),)}, TypeError, "bytearray"),
    ({"options": 3}, TypeError, "options must be a ProgramOptions, a dict or None"),
])
def test_bad_input_names_the_rule(kw, exc, match):
    with pytest.raises(exc, match=match):
        _key(**kw)


@pytest.mark.parametrize("opts", [
    {"include_path": "/usr/include"}, {"pre_include": "stdint.h"}, {"pch": True}, {"pch_dir": "d"},
    {"use_pch": ""}, {"use_pch": False}, {"include_path": range(1)},
])
def test_options_reading_unseen_files_need_extra_digest(opts):
    with pytest.raises(ValueError, match="extra_digest"):
        _key(options=ProgramOptions(arch="sm_80", **opts))


@pytest.mark.parametrize("opts", [{"include_path": []}, {"include_path": False}, {"pre_include": False},
                                  {"include_path": range(0)}])
def test_empty_or_false_include_options_need_no_digest(opts):
    assert _key(options=ProgramOptions(arch="sm_80", **opts)) == _key()


@pytest.mark.parametrize("opts", [{"create_pch": "a.pch"}, {"create_pch": False}, {"time": "t.csv"}, {"time": False},
                                  {"fdevice_time_trace": "t.json"}])
def test_side_effect_options_have_no_key_even_with_a_digest(opts):
    with pytest.raises(ValueError, match="side effect"):
        _key(options=ProgramOptions(arch="sm_80", **opts), extra_digest=b"d")


@pytest.mark.parametrize("name", ["dir/k.cu", "dir\\k.cu", "/abs/k.cu"])
def test_a_name_with_a_folder_needs_a_digest(name):
    with pytest.raises(ValueError, match="directory component"):
        _key(options=ProgramOptions(arch="sm_80", name=name))
    _key(options=ProgramOptions(arch="sm_80", name=name), extra_digest=b"fingerprint")


def test_extra_sources_only_for_nvvm():
    with pytest.raises(ValueError, match="extra_sources"):
        _key(options=ProgramOptions(arch="sm_80", extra_sources=[("a.cu", "int x;")]))


def test_str_and_bytes_name_expressions_are_different_keys():
    assert _key(name_expressions=("f",)) != _key(name_expressions=(b"f",))
    assert _key(name_expressions=("f", "g")) == _key(name_expressions=("g", "f"))


def test_compile_with_cache_hits_without_compiling():
    from nanocuda import Program

    opts = ProgramOptions(arch="sm_80", name="cached.cu")
    src = 'extern "C" __global__ void k() {}'
    cache = InMemoryProgramCache()
    cache[make_program_cache_key(code=src, code_type="c++", options=opts, target_type="cubin")] = b"stored-cubin"
    out = Program(src, "c++", opts).compile("cubin", cache=cache)
    assert bytes(out.code) == b"stored-cubin" and out.code_type == "cubin" and out.name == "cached.cu"


def test_compile_with_cache_rules():
    from nanocuda import Program

    p = Program('extern "C" __global__ void k() {}', "c++", ProgramOptions(arch="sm_80"))
    with pytest.raises(TypeError, match="ProgramCacheResource"):
        p.compile("cubin", cache={})
    with pytest.raises(ValueError, match="name_expressions cannot be used with cache="):
        p.compile("cubin", name_expressions=("k",), cache=InMemoryProgramCache())
    with pytest.raises(ValueError, match="extra_digest"):
        Program("void f() {}", "c++", ProgramOptions(arch="sm_80", include_path=["/x"])).compile(
            "cubin", cache=InMemoryProgramCache())
