"""The kernel-side TMA header compiles with NVRTC (and nvcc) for sm_90a; CPU only."""

import ctypes
import ctypes.util
import os
import pathlib
import shutil
import subprocess

import pytest

import nanocuda

ROOT = pathlib.Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "include"
KERNELS = ROOT / "tests" / "kernels" / "tma_roundtrip.cu"
CUDA_HOME = pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))


def _nvrtc():
    for name in ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"):
        for path in (CUDA_HOME / "lib64" / name, name):
            try:
                return ctypes.CDLL(str(path))
            except OSError:
                continue
    pytest.skip("NVRTC (libnvrtc.so) not found")


def nvrtc_compile(source: str, options: list[str]) -> tuple[int, str, bytes]:
    lib = _nvrtc()
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"test.cu", 0, None, None) == 0
    opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    rc = lib.nvrtcCompileProgram(prog, len(options), opts)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    cubin = b""
    if rc == 0:
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetCUBIN(prog, buf)
        cubin = buf.raw
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, log.value.decode(errors="replace"), cubin


def test_header_compiles_with_nvrtc_sm90a():
    rc, log, cubin = nvrtc_compile(KERNELS.read_text(), ["-arch=sm_90a", f"-I{INCLUDE}", "-std=c++17"])
    assert rc == 0, log
    assert cubin[:4] == b"\x7fELF"


def test_header_declares_cutensormap_without_cuda_h():
    src = '#include "nanocuda/device/tma.cuh"\n' \
          'static_assert(sizeof(CUtensorMap) == 128, "");\n' \
          'extern "C" __global__ void k(const __grid_constant__ CUtensorMap m, int* out) {\n' \
          '  nanocuda::tma::prefetch_tensormap(&m); *out = (int)m.opaque[0]; }\n'
    rc, log, _ = nvrtc_compile(src, ["-arch=sm_90a", f"-I{INCLUDE}"])
    assert rc == 0, log


def test_header_after_cuda_h_style_definition_does_not_redefine():
    # cuda.h itself needs libc headers NVRTC lacks; mimic its definition (nvcc test below
    # uses the real one).
    src = '#define CU_TENSOR_MAP_NUM_QWORDS 16\n' \
          'typedef struct CUtensorMap_st { alignas(64) unsigned long long opaque[16]; } CUtensorMap;\n' \
          '#include "nanocuda/device/tma.cuh"\n' \
          'extern "C" __global__ void k(const __grid_constant__ CUtensorMap m) {\n' \
          '  nanocuda::tma::prefetch_tensormap(&m); }\n'
    rc, log, _ = nvrtc_compile(src, ["-arch=sm_90a", f"-I{INCLUDE}"])
    assert rc == 0, log


@pytest.mark.skipif(shutil.which("nvcc") is None and not (CUDA_HOME / "bin" / "nvcc").exists(),
                    reason="nvcc not found")
def test_header_compiles_with_nvcc(tmp_path):
    nvcc = shutil.which("nvcc") or str(CUDA_HOME / "bin" / "nvcc")
    out = tmp_path / "k.cubin"
    r = subprocess.run([nvcc, "--cubin", "-arch=sm_90a", f"-I{INCLUDE}", "-o", str(out), str(KERNELS)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with_cuda_h = tmp_path / "with_cuda_h.cu"
    with_cuda_h.write_text('#include <cuda.h>\n#include "nanocuda/device/tma.cuh"\n'
                           'extern "C" __global__ void k(const __grid_constant__ CUtensorMap m) {\n'
                           '  nanocuda::tma::prefetch_tensormap(&m); }\n')
    r = subprocess.run([nvcc, "--cubin", "-arch=sm_90a", f"-I{INCLUDE}", "-o", str(out), str(with_cuda_h)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_installed_header_needs_no_include_path():
    """Kernels compiled by nanocuda get CUtensorMap from <nanocuda/device/tma.cuh> unaided."""
    src = r"""
#include <nanocuda/device/tma.cuh>
extern "C" __global__ void take3(const __grid_constant__ CUtensorMap a,
                                 const __grid_constant__ CUtensorMap b,
                                 const __grid_constant__ CUtensorMap c) {}
"""
    code = nanocuda.compile(src, arch="sm_90a")
    assert code.code[:4] == b"\x7fELF"
