"""The kernel workflow and the example kernels without a GPU: compile, list kernels, reload."""

import os
import pathlib
import shutil
import subprocess

import pytest

import nanocuda
from nanocuda import workflow

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNELS = ROOT / "examples" / "kernels"
EXPECTED = {
    "saxpy.cu": ["saxpy"],
    "square.cu": ["square"],
    "matmul.cu": ["matmul_naive", "matmul_tiled"],
    "hopper_gemm.cu": ["hopper_gemm"],
    "hopper_gemm_fast.cu": ["hopper_gemm_bf16", "hopper_gemm_f16"],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_compiles_for_sm90a_and_lists_its_kernels(name):
    mod = nanocuda.load(KERNELS / name, arch="sm_90a")
    assert mod.code.code[:4] == b"\x7fELF"
    assert mod.kernel_names == EXPECTED[name]


def test_every_example_has_a_python_caller_and_is_listed_here():
    for cu in KERNELS.glob("*.cu"):
        assert cu.name in EXPECTED, f"{cu.name}: add it to EXPECTED and to the GPU tests"
        assert (KERNELS / f"run_{cu.stem}.py").is_file()


def test_cubin_kernel_names_skips_device_functions_and_keeps_templates(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(
        "__device__ __noinline__ float helper(float x) { return x * x; }\n"
        'extern "C" __global__ void first(float* o) { o[0] = helper(o[1]); }\n'
        "template <int N> __global__ void tmpl(float* o) { o[0] = N; }\n"
        "template __global__ void tmpl<3>(float*);\n"
        'extern "C" __global__ void second(float* o) { o[0] = helper(o[2]); }\n')
    names = nanocuda.load(src, arch="sm_90a").kernel_names
    assert names == sorted(["first", "second", "_Z4tmplILi3EEvPf"])


def test_cubin_kernel_names_rejects_non_elf():
    with pytest.raises(ValueError, match="not a 64-bit ELF"):
        workflow.cubin_kernel_names(b"not a cubin at all")


def test_missing_kernel_names_the_file_and_lists_kernels(tmp_path):
    src = tmp_path / "one.cu"
    src.write_text('extern "C" __global__ void only(int* p) { *p = 1; }\n')
    mod = nanocuda.load(src, arch="sm_90a")
    with pytest.raises(AttributeError, match=r"one.cu has no kernel 'other'; kernels: only"):
        mod.other


def test_edit_of_file_or_local_header_recompiles(tmp_path):
    (tmp_path / "value.h").write_text("#define VALUE 1\n")
    src = tmp_path / "k.cu"
    src.write_text('#include "value.h"\nextern "C" __global__ void k(int* p) { *p = VALUE; }\n')
    mod = nanocuda.load(src, arch="sm_90a")
    assert mod.dependencies() == [str(src), str(tmp_path / "value.h")]
    first = mod.code.code
    assert not mod.reload_if_changed()

    (tmp_path / "value.h").write_text("#define VALUE 12345\n")
    st = os.stat(tmp_path / "value.h")
    os.utime(tmp_path / "value.h", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert mod.code.code != first  # the property re-checks and recompiles

    src.write_text('#include "value.h"\nextern "C" __global__ void renamed(int* p) { *p = VALUE; }\n')
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 2 * 10**9))
    assert mod.kernel_names == ["renamed"]


def test_compile_error_is_raised_with_the_file_name(tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text('extern "C" __global__ void k(int* p) { *p = undefined_name; }\n')
    with pytest.raises(nanocuda.CompileError) as info:
        nanocuda.load(src, arch="sm_90a")
    assert "undefined_name" in str(info.value) + (info.value.log or "")


def test_load_dir_names_modules_by_file_stem():
    mods = nanocuda.load_dir(KERNELS, arch="sm_90a")
    assert sorted(mods.modules) == sorted(p[:-3] for p in EXPECTED)
    assert mods.matmul.kernel_names == ["matmul_naive", "matmul_tiled"]


def test_device_headers_are_found_from_the_package():
    assert (pathlib.Path(nanocuda.include_dir()) / "nanocuda" / "device" / "tma.cuh").is_file()


def test_bound_config_must_be_grid_block_or_grid_block_shared():
    fn = workflow.KernelFunction(kernel=None, name="k")
    with pytest.raises(TypeError, match=r"k\[grid, block\]"):
        fn[1]
    with pytest.raises(TypeError):
        fn[1, 2, 3, 4]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
def test_hopper_gemm_compiles_with_nvcc_without_spills(tmp_path):
    r = subprocess.run(["nvcc", "--cubin", "-arch=sm_90a", f"-I{ROOT / 'include'}", "-Xptxas", "-v",
                        "-o", str(tmp_path / "g.cubin"), str(KERNELS / "hopper_gemm.cu")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "0 bytes spill stores" in r.stderr
