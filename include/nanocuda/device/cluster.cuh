// Kernel-side thread-block clusters (sm_90): this block's rank, the cluster's size, the
// cluster-wide barrier and distributed shared memory (another block's shared memory).
// Header-only; includes nothing. Launch with a cluster shape (LaunchConfig(cluster=...)).
//
//   unsigned me = nanocuda::cluster::rank(), peer = me ^ 1;
//   float* theirs = nanocuda::cluster::map_shared(my_array, peer);  // read/write peer's copy
//   nanocuda::cluster::sync();  // every block of the cluster arrived (and its writes are seen)
// A block must not exit while peers may still access its shared memory: end with sync().
#pragma once

namespace nanocuda {
namespace cluster {

// This block's rank in its cluster, 0 .. size()-1.
__device__ __forceinline__ unsigned rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Number of blocks in the cluster.
__device__ __forceinline__ unsigned size() {
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}

// The cluster's index in the grid (x only: the persistent GEMM launches a 1-D grid).
__device__ __forceinline__ unsigned id_x() {
  unsigned x;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(x));
  return x;
}

// Split barrier: arrive (release: this thread's writes become visible) ... wait (acquire).
__device__ __forceinline__ void arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
__device__ __forceinline__ void wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// All threads of all blocks of the cluster meet here.
__device__ __forceinline__ void sync() {
  arrive();
  wait();
}

// The address of `p` (a pointer into this block's shared memory) in block `cta_rank`'s shared
// memory, as a generic pointer usable with ordinary loads and stores.
template <class T>
__device__ __forceinline__ T* map_shared(T* p, unsigned cta_rank) {
  unsigned long long out;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(out) : "l"(reinterpret_cast<unsigned long long>(p)),
               "r"(cta_rank));
  return reinterpret_cast<T*>(out);
}

}  // namespace cluster
}  // namespace nanocuda
