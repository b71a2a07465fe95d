// Kernel-side programmatic dependent launch (sm_90): overlap a kernel's start with the end of
// the one before it on the stream. Header-only; includes nothing.
//
// Launch the dependent (second) kernel with LaunchConfig(pdl=True). Then:
//  - in the primary: launch_dependents() once its remaining work no longer needs to hold the
//    next kernel back (it may start its prologue; the primary's writes are NOT yet visible);
//  - in the dependent: wait() before touching anything the primary writes. wait() returns
//    when the whole primary grid has finished and flushed its memory.
// Both are no-ops when the kernel was launched without PDL, so the kernel stays correct alone.
#pragma once

namespace nanocuda {
namespace pdl {

__device__ __forceinline__ void wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

__device__ __forceinline__ void launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

}  // namespace pdl
}  // namespace nanocuda
