"""NVRTC compile time of kernels built on the device headers: cold (never seen) and cache hits.

    python examples/kernels/compile_time.py
"""
import os
import time

import nanocuda

HERE = os.path.dirname(os.path.abspath(__file__))
HEADERS = ["tma", "mbarrier", "wgmma", "warpgroup", "cluster", "pdl"]
SMALL = "".join(f"#include <nanocuda/device/{h}.cuh>\n" for h in HEADERS) + r"""
extern "C" __global__ void __launch_bounds__(128) k(const __grid_constant__ CUtensorMap A, float* out) {
  __shared__ alignas(1024) unsigned short a[64 * 64];
  __shared__ alignas(8) unsigned long long bar;
  using namespace nanocuda;
  if (threadIdx.x == 0) { mbar::init(&bar, 1); mbar::fence_init(); }
  __syncthreads();
  if (threadIdx.x == 0) { mbar::arrive_expect_tx(&bar, sizeof(a)); tma::load_tile(&A, a, &bar, 0, 0); }
  mbar::wait(&bar, 0);
  float d[32] = {};
  wgmma::fence();
  for (int k = 0; k < 64; k += 16) wgmma::mma<64, wgmma::F16>(d, wgmma::desc_k128(a + k), wgmma::desc_k128(a + k));
  wgmma::commit(); wgmma::wait<0>();
  for (int i = 0; i < 32; ++i) out[threadIdx.x * 32 + i] = d[i];
}
"""


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    gemm = os.path.join(HERE, "hopper_gemm_fast.cu")
    inc = [nanocuda.workflow.include_dir()]
    src = open(gemm).read()
    cases = (("all 6 headers + one wgmma kernel", SMALL, []),
             ("hopper_gemm_fast.cu, fp16 kernel only", src, ["GEMM_ONLY_F16"]),
             ("  the same, B K×N + cluster 2 + TMA store", src,
              ["GEMM_ONLY_F16", "GEMM_B_KN=1", "GEMM_CLUSTER=2", "GEMM_TMA_STORE=1"]),
             ("hopper_gemm_fast.cu, both kernels", src, []))
    rows = []
    for name, src, defines in cases:
        # A never-seen define makes a cold compile (nothing cached on disk or in memory).
        cold = min(timed(lambda: nanocuda.compile(src, arch="sm_90a", include_dirs=inc,
                                                  defines=defines + [f"COLD_{time.time_ns()}"]))
                   for _ in range(2))
        nanocuda.compile(src, arch="sm_90a", include_dirs=inc, defines=defines)  # fill the cache
        nanocuda.clear_memory_cache()
        disk = timed(lambda: nanocuda.compile(src, arch="sm_90a", include_dirs=inc, defines=defines))
        mem = timed(lambda: nanocuda.compile(src, arch="sm_90a", include_dirs=inc, defines=defines))
        rows.append((name, cold, disk, mem))
    print(f"{'NVRTC compile (sm_90a)':<44}{'cold s':>8}{'disk hit ms':>13}{'memory hit ms':>15}")
    for name, cold, disk, mem in rows:
        print(f"{name:<44}{cold:>8.2f}{disk * 1e3:>13.2f}{mem * 1e3:>15.3f}")


if __name__ == "__main__":
    main()
