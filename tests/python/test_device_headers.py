"""The device headers compile alone and together with NVRTC (sm_90a), and nvcc; CPU only."""

import pathlib
import shutil
import subprocess
import time

import pytest

from test_tma_device_header import CUDA_HOME, INCLUDE, nvrtc_compile

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADERS = sorted((INCLUDE / "nanocuda" / "device").glob("*.cuh"))
TEST_KERNELS = ROOT / "tests" / "kernels" / "device_headers.cu"
GEMM = ROOT / "examples" / "kernels" / "hopper_gemm_fast.cu"
OPTS = ["-arch=sm_90a", f"-I{INCLUDE}", "-std=c++17"]


@pytest.mark.parametrize("header", [h.name for h in HEADERS])
def test_each_header_compiles_alone_and_documents_itself(header):
    text = (INCLUDE / "nanocuda" / "device" / header).read_text()
    assert text.startswith("//"), "a purpose comment at the top"
    assert "#include <" not in text, "NVRTC has no libc headers: device headers include none"
    src = f'#include "nanocuda/device/{header}"\n#include "nanocuda/device/{header}"\n' \
          'extern "C" __global__ void k() {}\n'
    rc, log, _ = nvrtc_compile(src, OPTS)
    assert rc == 0, log


def test_test_kernels_compile():
    rc, log, cubin = nvrtc_compile(TEST_KERNELS.read_text(), OPTS)
    assert rc == 0, log
    assert b"wgmma_bf16_n256" in cubin and b"tma_multicast" in cubin


@pytest.mark.parametrize("bn", [128, 256])
def test_gemm_compiles_with_register_reallocation_and_no_serialized_wgmma(bn):
    t0 = time.perf_counter()
    rc, log, cubin = nvrtc_compile(GEMM.read_text(), OPTS + [f"-DGEMM_BN={bn}"])
    seconds = time.perf_counter() - t0
    assert rc == 0, log
    assert b"hopper_gemm_f16" in cubin and b"hopper_gemm_bf16" in cubin
    assert "C7508" not in log, "ptxas ignored setmaxnreg: " + log
    assert "C7519" not in log, "ptxas serialized wgmma (warpgroup.arrive injected): " + log
    print(f"NVRTC cold compile of hopper_gemm_fast.cu (BN={bn}, 2 kernels): {seconds:.2f} s")


@pytest.mark.skipif(shutil.which("nvcc") is None and not (CUDA_HOME / "bin" / "nvcc").exists(),
                    reason="nvcc not found")
def test_headers_compile_with_nvcc_and_cuda_h(tmp_path):
    nvcc = shutil.which("nvcc") or str(CUDA_HOME / "bin" / "nvcc")
    src = tmp_path / "all.cu"
    src.write_text("#include <cuda.h>\n" + "".join(f'#include "nanocuda/device/{h.name}"\n' for h in HEADERS)
                   + 'extern "C" __global__ void k(const __grid_constant__ CUtensorMap m) {\n'
                   "  nanocuda::tma::prefetch_tensormap(&m); nanocuda::pdl::wait(); }\n")
    for f in (src, GEMM):
        r = subprocess.run([nvcc, "--cubin", "-gencode=arch=compute_90a,code=sm_90a", f"-I{INCLUDE}",
                            "-o", str(tmp_path / "k.cubin"), str(f)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
