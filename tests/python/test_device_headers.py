"""The device headers compile alone and together with NVRTC (sm_90a), and nvcc; CPU only."""

import pathlib
import re
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


EVERY_HELPER = r"""
#include "nanocuda/device/cluster.cuh"
#include "nanocuda/device/pdl.cuh"
#include "nanocuda/device/tma.cuh"
#include "nanocuda/device/warpgroup.cuh"
#include "nanocuda/device/wgmma.cuh"
using namespace nanocuda;
extern "C" __global__ void __launch_bounds__(256, 1) every(const __grid_constant__ CUtensorMap m, int* out) {
  __shared__ alignas(1024) unsigned short t[256 * 64];
  __shared__ alignas(8) unsigned long long bar;
  mbar::init(&bar, 1); mbar::fence_init();
  mbar::expect_tx(&bar, 128); mbar::arrive_expect_tx(&bar, 128); mbar::arrive(&bar);
  mbar::arrive_cluster(&bar, cluster::rank() ^ 1); mbar::arrive_cluster_cta(&bar, cluster::rank() ^ 1);
  out[0] = mbar::try_wait(&bar, 0); mbar::wait(&bar, 1); mbar::wait_cluster(&bar, 0);
  tma::load_tile_multicast(&m, t, &bar, 3, 0, 0); tma::load_tile_multicast(&m, t, &bar, 3, 0, 0, 0);
  tma::prefetch_tile(&m, 0, 0); tma::store_tile(&m, t, 0, 0); tma::store_commit(); tma::store_wait_read<0>();
  out[1] = cluster::size() + cluster::id_x() + *cluster::map_shared(out, 0);
  cluster::arrive(); cluster::wait(); pdl::launch_dependents(); pdl::wait();
  if (warpgroup::index() == 0) { warpgroup::dec_regs<24>(); warpgroup::named_sync(1, 128); }
  else {
    warpgroup::inc_regs<240>();
    float d64[32] = {}, d128[64] = {}, d256[128] = {};
    unsigned long long a = wgmma::desc_k128(t), b = wgmma::desc_k128(t + 16);
    wgmma::fence();
    wgmma::mma<64, wgmma::F16>(d64, a, b); wgmma::mma<64, wgmma::BF16>(d64, a, b, 0);
    wgmma::mma<128, wgmma::F16>(d128, a, b); wgmma::mma<128, wgmma::BF16>(d128, a, b);
    wgmma::mma<256, wgmma::F16>(d256, a, b); wgmma::mma<256, wgmma::BF16>(d256, a, b);
    const unsigned long long bt = wgmma::desc_mn128(t + 64 * 64, 8192);
    wgmma::mma<64, wgmma::F16, 1>(d64, a, bt); wgmma::mma<128, wgmma::BF16, 1>(d128, a, bt, 0);
    wgmma::mma<256, wgmma::F16, 1>(d256, a, bt); wgmma::mma<256, wgmma::BF16, 1>(d256, a, bt);
    wgmma::commit(); wgmma::wait<0>(); wgmma::fence_operands(d64);
    float s = 0;
    for (int i = 0; i < 32; ++i) s += d64[i] + d128[i] + d256[i];
    out[2 + threadIdx.x] = (int)s;
  }
}
"""


def test_every_helper_assembles_for_sm90a():
    """Inline PTX is only assembled where it is used: this kernel uses every helper."""
    rc, log, cubin = nvrtc_compile(EVERY_HELPER, OPTS)
    assert rc == 0, log
    assert "C7508" not in log, log


def test_test_kernels_compile():
    rc, log, cubin = nvrtc_compile(TEST_KERNELS.read_text(), OPTS)
    assert rc == 0, log
    assert b"wgmma_bf16_n256" in cubin and b"tma_multicast" in cubin
    assert b"wgmma_f16_n128_kn" in cubin and b"cluster_arrive" in cubin


GEMM_VARIANTS = {  # run_hopper_gemm_fast.HopperGemm's switches as -D options
    "bn256": [], "bn128": ["-DGEMM_BN=128"], "b_kn": ["-DGEMM_B_KN=1"],
    "cluster2": ["-DGEMM_CLUSTER=2"], "tma_store": ["-DGEMM_TMA_STORE=1"],
    "b_kn_cluster2_tma_store": ["-DGEMM_B_KN=1", "-DGEMM_CLUSTER=2", "-DGEMM_TMA_STORE=1"],
    "bn128_b_kn_cluster2": ["-DGEMM_BN=128", "-DGEMM_B_KN=1", "-DGEMM_CLUSTER=2"],
    "bn192_b_kn_tma_store": ["-DGEMM_BN=192", "-DGEMM_B_KN=1", "-DGEMM_TMA_STORE=1"],
    "bn192_cluster2_tma_store": ["-DGEMM_BN=192", "-DGEMM_CLUSTER=2", "-DGEMM_TMA_STORE=1"],
    "bn192_b_kn_cluster4_tma_store": ["-DGEMM_BN=192", "-DGEMM_B_KN=1", "-DGEMM_CLUSTER=4", "-DGEMM_TMA_STORE=1"],
    # the deferred epilogue keeps the packed tile (BN / 4 registers) beside the accumulators
    "bn256_tma_store_defer": ["-DGEMM_TMA_STORE=1", "-DGEMM_DEFER_EPILOGUE=1"],
    "bn192_cluster2_tma_store_defer": ["-DGEMM_BN=192", "-DGEMM_CLUSTER=2", "-DGEMM_TMA_STORE=1",
                                       "-DGEMM_DEFER_EPILOGUE=1"],
    "bn192_b_kn_tma_store_defer": ["-DGEMM_BN=192", "-DGEMM_B_KN=1", "-DGEMM_TMA_STORE=1", "-DGEMM_DEFER_EPILOGUE=1"],
    "bn192_cluster2_tma_store_l2_hints": ["-DGEMM_BN=192", "-DGEMM_CLUSTER=2", "-DGEMM_TMA_STORE=1", "-DGEMM_L2_HINTS=2"],
}


@pytest.mark.parametrize("variant", list(GEMM_VARIANTS))
def test_gemm_compiles_without_spills_or_ptxas_warnings(variant):
    t0 = time.perf_counter()
    rc, log, cubin = nvrtc_compile(GEMM.read_text(), OPTS + GEMM_VARIANTS[variant] + ["--ptxas-options=-v"])
    seconds = time.perf_counter() - t0
    assert rc == 0, log
    assert b"hopper_gemm_f16" in cubin and b"hopper_gemm_bf16" in cubin
    assert "C7508" not in log, "ptxas ignored setmaxnreg: " + log
    assert "C7519" not in log, "ptxas serialized wgmma (warpgroup.arrive injected): " + log
    assert "warning" not in log.lower(), log
    spills = re.findall(r"(\d+) bytes spill stores", log)
    assert len(spills) == 2 and set(spills) == {"0"}, "spills (or no -v report): " + log
    print(f"NVRTC cold compile of hopper_gemm_fast.cu ({variant}, 2 kernels): {seconds:.2f} s")


@pytest.mark.skipif(shutil.which("nvcc") is None and not (CUDA_HOME / "bin" / "nvcc").exists(),
                    reason="nvcc not found")
def test_headers_compile_with_nvcc_and_cuda_h(tmp_path):
    nvcc = shutil.which("nvcc") or str(CUDA_HOME / "bin" / "nvcc")
    src = tmp_path / "all.cu"
    src.write_text("#include <cuda.h>\n" + "".join(f'#include "nanocuda/device/{h.name}"\n' for h in HEADERS)
                   + 'extern "C" __global__ void k(const __grid_constant__ CUtensorMap m) {\n'
                   "  nanocuda::tma::prefetch_tensormap(&m); nanocuda::pdl::wait(); }\n")
    for f, defines in ((src, []), (GEMM, []), (GEMM, GEMM_VARIANTS["b_kn_cluster2_tma_store"])):
        r = subprocess.run([nvcc, "--cubin", "-gencode=arch=compute_90a,code=sm_90a", f"-I{INCLUDE}", *defines,
                            "-o", str(tmp_path / "k.cubin"), str(f)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "warning" not in r.stderr.lower(), r.stderr
