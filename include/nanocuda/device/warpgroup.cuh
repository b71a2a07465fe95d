// Kernel-side warpgroups (sm_90a): which warpgroup a thread is in, register reallocation
// between warpgroups (setmaxnreg), and named barriers over a subset of warps. Header-only.
//
// A warpgroup is 4 consecutive warps starting at a warp index divisible by 4 (128 threads);
// wgmma is issued per warpgroup. setmaxnreg moves registers from producer warpgroups (that
// only issue TMA) to consumer warpgroups (that hold big accumulators):
//   extern "C" __global__ void __launch_bounds__(384, 1) k(...) {   // the ", 1" matters:
//     if (warpgroup::index() == 0) { warpgroup::dec_regs<40>(); ... }  // setmaxnreg needs a
//     else                         { warpgroup::inc_regs<232>(); ... } // register cap at entry
// Counts are per thread, multiples of 8 in [24, 256]; all warps of a warpgroup must execute
// the same call, and the totals must fit the multiprocessor's 64K registers. When ptxas
// cannot honour it, it warns (C7508) and ignores the request.
#pragma once

namespace nanocuda {
namespace warpgroup {

__device__ __forceinline__ unsigned index() { return threadIdx.x / 128; }
__device__ __forceinline__ unsigned thread() { return threadIdx.x % 128; }

template <unsigned N>
__device__ __forceinline__ void inc_regs() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

template <unsigned N>
__device__ __forceinline__ void dec_regs() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

// Named barrier `id` (1..15; 0 is __syncthreads) among `threads` threads (a multiple of 32).
__device__ __forceinline__ void named_sync(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace warpgroup
}  // namespace nanocuda
