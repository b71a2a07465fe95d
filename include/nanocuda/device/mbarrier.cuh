// Kernel-side mbarriers (sm_90): init, arrive, expect-tx, try-wait on a phase parity, and
// arrivals on another block's barrier in the cluster. Header-only; includes nothing.
//
// An mbarrier is one 8-byte-aligned `unsigned long long` in shared memory. A phase completes
// when `count` arrivals (from mbarrier_init) have happened AND every byte announced with
// expect_tx has landed (TMA counts its bytes down). Phases alternate parity 0, 1, 0, ...:
// a consumer of a ring slot used for the i-th time waits for parity (i & 1). Waiting for the
// parity of the phase *before* the current one returns at once, which is how a producer
// passes its first wait on an "empty" barrier nobody has arrived on yet.
//
//   __shared__ alignas(8) unsigned long long bar;
//   if (threadIdx.x == 0) { nanocuda::mbar::init(&bar, 1); nanocuda::mbar::fence_init(); }
//   __syncthreads();
//   ... producer: mbar::arrive_expect_tx(&bar, bytes); tma::load_tile(..., &bar, ...);
//   ... consumers: mbar::wait(&bar, phase);
#pragma once

namespace nanocuda {

// 32-bit shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

namespace mbar {

__device__ __forceinline__ void init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count)
               : "memory");
}

// Makes init visible to the async proxy (TMA) and to the other blocks of the cluster; follow
// it with __syncthreads() (or cluster::sync() when other blocks use the barrier).
__device__ __forceinline__ void fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// One arrival plus `bytes` more expected from TMA in the current phase.
__device__ __forceinline__ void arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// Announces `bytes` without arriving (when several copies feed one arrival).
__device__ __forceinline__ void expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// Arrives on the barrier at the same offset in block `cta_rank` of this cluster (itself
// included), releasing this thread's writes to that block at cluster scope (pair it with
// wait_cluster there). For a bare "I am done reading" see arrive_cluster_cta below.
__device__ __forceinline__ void arrive_cluster(unsigned long long* bar, unsigned cta_rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(cta_rank)
      : "memory");
}

// The same remote arrival with PTX's default semantics (release at CTA scope), a bare arrive
// in SASS: arrive_cluster's cluster-scope release costs a GPU-wide fence (MEMBAR.GPU, which
// waits for this thread's outstanding global stores). Use it when the peer needs the arrival
// only, not this thread's writes: a consumer freeing a ring slot it read with wgmma, which the
// peer's multicast refills.
__device__ __forceinline__ void arrive_cluster_cta(unsigned long long* bar, unsigned cta_rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(cta_rank)
      : "memory");
}

// True once the phase with parity `phase` has completed (may also give up after a
// hardware-chosen time and return false: loop, or use wait()).
__device__ __forceinline__ bool try_wait(unsigned long long* bar, unsigned phase) {
  unsigned done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(phase)
      : "memory");
  return done != 0;
}

// Blocks until the phase with parity `phase` has completed.
__device__ __forceinline__ void wait(unsigned long long* bar, unsigned phase) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(phase)
      : "memory");
}

// The same wait with cluster-scope acquire: use it when the arrivals came from other blocks
// of the cluster and this thread then reads what they wrote.
__device__ __forceinline__ void wait_cluster(unsigned long long* bar, unsigned phase) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(phase)
      : "memory");
}

}  // namespace mbar
}  // namespace nanocuda
