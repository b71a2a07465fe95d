"""cuda.core's compile surface on nanocuda, CPU only: ProgramOptions names, Program, ObjectCode, Linker."""

import io

import pytest

from nanocuda import CompileError, Linker, LinkerOptions, ObjectCode, Program, ProgramOptions
import nanocuda

ARCH = "sm_90"

CODE = r"""
template<typename T>
__global__ void vector_add(const T* A, const T* B, T* C, size_t N) {
    const unsigned int tid = threadIdx.x + blockIdx.x * blockDim.x;
    for (size_t i = tid; i < N; i += gridDim.x * blockDim.x) {
        C[i] = A[i] + B[i];
    }
}
"""

# NVVM IR for libNVVM (typed pointers, NVVM IR 2.0).
NVVM_IR = r"""
target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @scale(float* %x) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %idx = zext i32 %tid to i64
  %p = getelementptr float, float* %x, i64 %idx
  %v = load float, float* %p
  %r = fmul float %v, 2.0
  store float %r, float* %p
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x() nounwind readnone

!nvvm.annotations = !{!0}
!0 = !{void (float*)* @scale, !"kernel", i32 1}

!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0, i32 3, i32 1}
"""


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NANOCUDA_CACHE_DIR", str(tmp_path / "cache"))
    nanocuda.clear_memory_cache()
    yield
    nanocuda.clear_memory_cache()


def have_nvvm() -> bool:
    try:
        nanocuda._nanocuda._internal.nvvm_library()
        return True
    except nanocuda.ToolkitNotFoundError:
        return False


# --- ProgramOptions ---------------------------------------------------------------------

def test_cuda_core_option_names_become_nvrtc_flags():
    opts = ProgramOptions(std="c++17", arch=ARCH, debug=True, lineinfo=True, use_fast_math=True,
                          max_register_count=32, define_macro=[("N", "4"), "FAST"], include_path="/tmp/inc",
                          relocatable_device_code=True, ftz=True, prec_div=False, prec_sqrt=False, fma=True,
                          device_code_optimize=True, diag_suppress=[177, 550], undefine_macro="OLD",
                          pre_include="cuda_fp16.h", ptxas_options=["-v", "-O3"], split_compile=2)
    flags = Program(CODE, code_type="c++", options=opts).flags("cubin")
    for expected in ("-arch=sm_90", "-std=c++17", "-G", "-lineinfo", "--use_fast_math", "--maxrregcount=32",
                     "-DN=4", "-DFAST", "-I/tmp/inc", "-rdc=true", "--ftz=true", "--prec-div=false",
                     "--prec-sqrt=false", "--fmad=true", "--dopt=on", "--diag-suppress=177,550", "-UOLD",
                     "--pre-include=cuda_fp16.h", "--ptxas-options=-v", "--ptxas-options=-O3",
                     "--split-compile=2"):
        assert expected in flags, (expected, flags)


def test_cuda_core_names_read_back_and_alias_nanocudas_fields():
    opts = ProgramOptions(use_fast_math=True, max_register_count=64, include_path=["/a", "/b"], ftz=False)
    assert opts.fast_math is True and opts.use_fast_math is True
    assert opts.max_registers == 64 and opts.max_register_count == 64
    assert opts.include_dirs == ["/a", "/b"] and opts.include_path == ["/a", "/b"]
    assert opts.ftz is False
    assert opts.prec_div is None  # not given, as in cuda.core
    assert "extensible_whole_program" in ProgramOptions.option_names()
    assert "numba_debug" in ProgramOptions.option_names()


def test_none_means_not_given():
    assert ProgramOptions(ftz=None, max_register_count=None).named_flags() == []


def test_nanocudas_own_option_names_still_work():
    flags = Program(CODE, ProgramOptions(arch="90a", fast_math=True, max_registers=40, defines=["X=1"])).flags()
    assert {"-arch=sm_90a", "--use_fast_math", "--maxrregcount=40", "-DX=1"} <= set(flags)


def test_unknown_option_names_the_option_and_close_matches():
    with pytest.raises(TypeError, match=r"ProgramOptions: unknown option 'bogus'") as e:
        ProgramOptions(bogus=1)
    assert "known options" in str(e.value) and "use_fast_math" in str(e.value)
    with pytest.raises(TypeError, match=r"unknown option 'use_fastmath' \(did you mean 'use_fast_math'"):
        ProgramOptions(use_fastmath=True)
    with pytest.raises(TypeError, match=r"did you mean .*'max_register_count'"):
        ProgramOptions(max_register=32)


def test_option_value_of_the_wrong_kind():
    with pytest.raises(TypeError, match=r"ProgramOptions: option 'ftz' takes a bool"):
        ProgramOptions(ftz="yes")
    with pytest.raises(TypeError, match=r"option 'split_compile' takes an int"):
        ProgramOptions(split_compile="2")
    with pytest.raises(TypeError, match=r"define_macro items"):
        ProgramOptions(define_macro=[3.5])


def test_every_nvrtc_option_is_one_nvrtc_takes():
    # NVRTC rejects unknown flags, so compiling with each proves the spelling.
    src = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = sqrtf(x[threadIdx.x]) / 3.0f; }'
    values = dict(extensible_whole_program=True, device_code_optimize=False, ptxas_options="-v", ftz=True,
                  prec_sqrt=True, prec_div=True, fma=False, extra_device_vectorization=True, undefine_macro="X",
                  use_bundled_headers=True, pre_include="cuda_fp16.h", no_source_include=True,
                  builtin_move_forward=True, builtin_initializer_list=True, disable_warnings=True, restrict=True,
                  device_int128=True, optimization_info="inline", no_display_error_number=True, diag_error=20,
                  diag_suppress=177, diag_warn=550, brief_diagnostics=True, split_compile=1,
                  fdevice_syntax_only=True, minimal=True, no_cache=True, frandom_seed="7", ofast_compile="min",
                  pch=True, pch_verbose=False, pch_messages=False, instantiate_templates_in_pch=False)
    for name, value in values.items():
        Program(src, "c++", ProgramOptions(arch=ARCH, **{name: value})).compile("ptx")
    Program(src, "c++", ProgramOptions(arch=ARCH, link_time_optimization=True, gen_opt_lto=True)).compile("ltoir")


# --- Program and compile -------------------------------------------------------------------

def test_seed_pattern_compile_with_name_expressions():
    prog = Program(CODE, code_type="c++", options=ProgramOptions(std="c++17", arch=ARCH))
    mod = prog.compile("cubin", name_expressions=("vector_add<float>",))
    assert mod.code_type == "cubin"
    assert mod.code[:4] == b"\x7fELF"
    assert mod.symbol_mapping == {"vector_add<float>": "_Z10vector_addIfEvPKT_S2_PS0_m"}
    assert prog.backend == "NVRTC" and prog.code_type == "c++"


@pytest.mark.parametrize("target", ["ptx", "cubin", "ltoir"])
def test_compile_targets(target):
    opts = ProgramOptions(arch=ARCH, relocatable_device_code=target == "ltoir")
    mod = Program(CODE, "c++", opts).compile(target, name_expressions=["vector_add<double>"])
    assert mod.code_type == target
    assert len(mod.code) > 100
    if target == "ptx":
        assert b".entry _Z10vector_addIdEvPKT_S2_PS0_m" in mod.code


def test_program_name_comes_from_options():
    mod = Program(CODE, "c++", ProgramOptions(arch=ARCH, name="vector.cu")).compile("ptx")
    assert mod.name == "vector.cu"


def test_logs_receive_the_compile_log():
    src = 'extern "C" __global__ void k(int* p) { int unused; p[0] = 1; }'
    logs = io.StringIO()
    Program(src, "c++", ProgramOptions(arch=ARCH)).compile("ptx", logs=logs)
    assert "unused" in logs.getvalue()
    silent = io.StringIO()  # the same warning suppressed by its number
    Program(src, "c++", ProgramOptions(arch=ARCH, diag_suppress=177)).compile("ptx", logs=silent)
    assert silent.getvalue() == ""


def test_code_type_and_target_type_errors_list_valid_ones():
    with pytest.raises(ValueError, match=r"Program: unknown code_type 'cuda': expected 'c\+\+', 'ptx' or 'nvvm'"):
        Program(CODE, code_type="cuda")
    prog = Program(CODE, "c++", ProgramOptions(arch=ARCH))
    with pytest.raises(ValueError, match=r"unknown code type 'elf': expected 'cubin', 'ptx', 'ltoir'"):
        prog.compile("elf")
    with pytest.raises(ValueError, match=r"target_type 'fatbin' is not supported for code_type 'c\+\+'"):
        prog.compile("fatbin")
    with pytest.raises(TypeError, match=r"Program: code must be a str"):
        Program(b"bytes", code_type="c++")
    with pytest.raises(TypeError, match=r"Program.compile: cache must be a nanocuda.utils.ProgramCacheResource"):
        prog.compile("ptx", cache=object())
    with pytest.raises(TypeError, match=r"Program: options must be a nanocuda.ProgramOptions"):
        Program(CODE, "c++", options={"arch": ARCH})


def test_compile_error_carries_the_log():
    with pytest.raises(CompileError, match=r"error"):
        Program("__global__ void k( {", "c++", ProgramOptions(arch=ARCH)).compile("cubin")


def test_ptx_program_links_to_cubin():
    ptx = Program(CODE, "c++", ProgramOptions(arch=ARCH)).compile("ptx", name_expressions=["vector_add<float>"])
    prog = Program(ptx.code.decode(), code_type="ptx", options=ProgramOptions(arch=ARCH, name="va.ptx"))
    assert prog.backend == "nvJitLink"
    cubin = prog.compile("cubin")
    assert cubin.code_type == "cubin" and cubin.code[:4] == b"\x7fELF" and cubin.name == "va.ptx"
    with pytest.raises(ValueError, match=r"target_type 'ptx' is not supported for code_type 'ptx': expected 'cubin'"):
        prog.compile("ptx")


def test_nvvm_program():
    if not have_nvvm():
        with pytest.raises(nanocuda.ToolkitNotFoundError, match=r"libNVVM.*nvidia-nvvm"):
            Program(NVVM_IR, code_type="nvvm", options=ProgramOptions(arch=ARCH)).compile("ptx")
        return
    prog = Program(NVVM_IR, code_type="nvvm", options=ProgramOptions(arch=ARCH))
    assert prog.backend == "NVVM"
    ptx = prog.compile("ptx")
    assert b".entry scale" in ptx.code
    assert prog.compile("cubin").code[:4] == b"\x7fELF"
    assert prog.compile("ltoir").code_type == "ltoir"
    assert Program(NVVM_IR.encode(), code_type="nvvm", options=ProgramOptions(arch=ARCH)).compile("ptx").code == ptx.code
    with pytest.raises(ValueError, match=r"option 'diag_suppress' is for NVRTC"):
        Program(NVVM_IR, "nvvm", ProgramOptions(arch=ARCH, diag_suppress=1)).compile("ptx")
    with pytest.raises(CompileError):
        Program("not llvm", "nvvm", ProgramOptions(arch=ARCH)).compile("ptx")


# --- ObjectCode ----------------------------------------------------------------------------

def test_object_code_constructors_from_bytes_and_paths(tmp_path):
    prog = Program(CODE, "c++", ProgramOptions(arch=ARCH, relocatable_device_code=True))
    cubin = prog.compile("cubin", name_expressions=["vector_add<float>"])
    ptx = prog.compile("ptx")
    ltoir = prog.compile("ltoir")
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin.code)
    for made, kind in ((ObjectCode.from_cubin(cubin.code), "cubin"), (ObjectCode.from_cubin(str(path)), "cubin"),
                       (ObjectCode.from_cubin(path), "cubin"), (ObjectCode.from_ptx(ptx.code), "ptx"),
                       (ObjectCode.from_ptx(ptx.code.decode()), "ptx"), (ObjectCode.from_ltoir(ltoir.code), "ltoir"),
                       (ObjectCode.from_fatbin(cubin.code), "fatbin"), (ObjectCode.from_object(cubin.code), "object"),
                       (ObjectCode.from_library(bytearray(cubin.code)), "library")):
        assert made.code_type == kind
        assert len(made.code) > 0
    assert ObjectCode.from_cubin(path).code == str(path) and bytes(ObjectCode.from_cubin(path)) == cubin.code
    named = ObjectCode.from_cubin(cubin.code, name="mine", symbol_mapping={"add": "_Z3addv"})
    assert named.name == "mine" and named.symbol_mapping == {"add": "_Z3addv"}
    with pytest.raises(TypeError, match=r"ObjectCode.from_cubin: module must be bytes, a path"):
        ObjectCode.from_cubin(12)
    with pytest.raises(ValueError, match=r"cannot read"):
        ObjectCode.from_cubin(str(tmp_path / "missing.cubin"))


# --- Linker ------------------------------------------------------------------------------

def test_linker_links_ltoir_to_cubin_and_ptx_with_logs():
    opts = ProgramOptions(arch=ARCH, relocatable_device_code=True, link_time_optimization=True)
    a = Program('extern "C" __device__ float twice(float x) { return 2 * x; }', "c++", opts).compile("ltoir")
    b = Program('extern "C" __device__ float twice(float);\n'
                'extern "C" __global__ void k(float* p) { p[threadIdx.x] = twice(p[threadIdx.x]); }',
                "c++", opts).compile("ltoir")
    linker = Linker(a, b, options=LinkerOptions(arch=ARCH, link_time_optimization=True, verbose=True,
                                                 name="linked"))
    cubin = linker.link("cubin")
    assert cubin.code_type == "cubin" and cubin.code[:4] == b"\x7fELF" and cubin.name == "linked"
    assert "ptxas info" in linker.get_info_log()
    assert linker.get_error_log() == ""
    ptx = Linker(a, b, options=LinkerOptions(arch=ARCH, link_time_optimization=True)).link("ptx")
    assert ptx.code_type == "ptx" and b".entry k" in ptx.code
    assert Linker.which_backend() == "nvJitLink"


def test_linker_keeps_symbol_mapping_and_reports_errors():
    mod = Program(CODE, "c++", ProgramOptions(arch=ARCH)).compile("ptx", name_expressions=["vector_add<int>"])
    out = Linker(mod, options=LinkerOptions(arch=ARCH)).link("cubin")
    assert out.symbol_mapping == {"vector_add<int>": "_Z10vector_addIiEvPKT_S2_PS0_m"}
    missing = Program('extern "C" __device__ float f(float);\n'
                      'extern "C" __global__ void k(float* p) { p[0] = f(p[0]); }',
                      "c++", ProgramOptions(arch=ARCH, relocatable_device_code=True)).compile("ptx")
    linker = Linker(missing, options=LinkerOptions(arch=ARCH))
    with pytest.raises(CompileError, match=r"f"):
        linker.link("cubin")
    assert "f" in linker.get_error_log()


def test_linker_options_errors():
    with pytest.raises(TypeError, match=r"LinkerOptions: unknown option 'verbos' \(did you mean 'verbose'"):
        LinkerOptions(verbos=True)
    with pytest.raises(TypeError, match=r"option 'ftz' takes a bool"):
        LinkerOptions(ftz=1)
    flags = LinkerOptions(arch=ARCH, max_register_count=32, optimization_level=3, ftz=True,
                          ptxas_options="-v", kernels_used=["a", "b"]).flags("cubin")
    assert flags[:1] == ["-arch=sm_90"]
    assert {"-maxrregcount=32", "-O3", "-ftz=true", "-Xptxas=-v", "-kernels-used=a", "-kernels-used=b"} <= set(flags)
    with pytest.raises(ValueError, match=r"Linker.link: unknown target_type 'ltoir': expected 'cubin' or 'ptx'"):
        LinkerOptions(arch=ARCH).flags("ltoir")
    with pytest.raises(TypeError, match=r"Linker: inputs must be nanocuda.ObjectCode"):
        Linker(b"not code")
    with pytest.raises(ValueError, match=r"At least one ObjectCode"):
        Linker()


def test_module_link_function_is_the_same_linker():
    mod = Program(CODE, "c++", ProgramOptions(arch=ARCH)).compile("ptx", name_expressions=["vector_add<int>"])
    assert nanocuda.link([mod], arch=ARCH).code_type == "cubin"
