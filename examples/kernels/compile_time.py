"""NVRTC compile time of kernels built on the device headers: cold (never seen) and cache hits.

    python examples/kernels/compile_time.py

Three caches can answer a compile, and each column turns off all but one:
  cold         nothing cached: a never-seen define misses nanocuda's cache, and no_cache=True
               (NVRTC's --no-cache) keeps NVRTC from its own cache. Since CUDA 12.9, NVRTC
               keeps PTX and cubins in the driver's compute cache (~/.nv/ComputeCache, the
               CUDA_CACHE_* variables) when a driver is loaded, keyed on the compiled code, so a
               comment or an unused define still hits it.
  NVRTC cache  nanocuda's cache misses, NVRTC's own cache hits (only where a driver is present:
               without one NVRTC compiles in full, like "cold").
  disk/memory  nanocuda's cache: a new process (disk) or the same process (memory).
The GEMM rows are the modules run_hopper_gemm_fast.py compiles: one dtype's kernel each.
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
    gemm_default = ["GEMM_ONLY_F16", "GEMM_TMA_STORE=1"]
    cases = (("all 6 headers + one wgmma kernel", SMALL, []),
             ("GEMM fp16, A·Bᵀ (the default module)", src, gemm_default),
             ("GEMM fp16, A·B", src, gemm_default + ["GEMM_B_KN=1"]),
             ("GEMM fp16, cluster 2 (K % 64 != 0)", src, gemm_default + ["GEMM_CLUSTER=2"]),
             ("GEMM fp16, register-store epilogue", src, ["GEMM_ONLY_F16"]))
    rows = []
    for name, src, defines in cases:
        def fresh(**options):
            # A never-seen define: nanocuda's cache (disk and memory) misses.
            return timed(lambda: nanocuda.compile(src, arch="sm_90a", include_dirs=inc,
                                                  defines=defines + [f"COLD_{time.time_ns()}"], **options))
        cold = min(fresh(no_cache=True) for _ in range(3))
        nvrtc_hit = min(fresh() for _ in range(2))  # the first of these may fill NVRTC's cache
        nanocuda.compile(src, arch="sm_90a", include_dirs=inc, defines=defines)  # fill nanocuda's
        nanocuda.clear_memory_cache()
        disk = timed(lambda: nanocuda.compile(src, arch="sm_90a", include_dirs=inc, defines=defines))
        mem = timed(lambda: nanocuda.compile(src, arch="sm_90a", include_dirs=inc, defines=defines))
        rows.append((name, cold, nvrtc_hit, disk, mem))
    print(f"{'NVRTC compile (sm_90a)':<40}{'cold s':>8}{'NVRTC cache s':>15}"
          f"{'disk hit ms':>13}{'memory hit ms':>15}")
    for name, cold, nvrtc_hit, disk, mem in rows:
        print(f"{name:<40}{cold:>8.2f}{nvrtc_hit:>15.2f}{disk * 1e3:>13.2f}{mem * 1e3:>15.3f}")


if __name__ == "__main__":
    main()
