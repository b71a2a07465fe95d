// What a bound launch keeps between calls: the kernel's function in the stream's context,
// the config, an aligned parameter buffer pre-wired to the kernel's layout, and per-slot
// type decisions. Shared by the Launcher fast path and the C++ baseline loops.
#pragma once

#include <cstdlib>
#include <memory>
#include <vector>

#include "launch/arg_pack.h"
#include "tma/bound_tensor_map.h"
#include "nanocuda/compile/kernel.h"
#include "nanocuda/launch/launch.h"

namespace nanocuda::py {

struct LaunchState {
  Kernel kernel;
  LaunchConfig config;
  Stream stream;
  CUcontext context;
  std::uint32_t shared_mem_limit = 48 * 1024;
  LaunchTarget target;
  struct FreeAligned {
    void operator()(unsigned char* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<unsigned char[], FreeAligned> storage;
  std::vector<void*> pointers;
  std::vector<ArgSlot> slots;
  std::vector<std::unique_ptr<BoundTensorMap>> bound_maps;  // per parameter, mostly empty
  ParamPacker packer;

  LaunchState(const Kernel& k, const LaunchConfig& c, const Stream& s);
  LaunchState(const LaunchState&) = delete;
  LaunchState& operator=(const LaunchState&) = delete;

  // Packs `args` and launches on `on` (the bound stream unless overridden).
  void call(PyObject* const* args, std::size_t n, const Stream& on);

 private:
  // The same with a buffer, slots and bound-map copies of its own: for a call that arrives
  // while another is still packing into the shared buffer. Packing can run Python code (a
  // __cuda_array_interface__ property, the first-sight hook), and with it another thread,
  // or a nested call of this Launcher, may run before the first call has launched.
  void call_unshared(PyObject* const* args, std::size_t n, const Stream& on);
  bool busy_ = false;  // read and set under the GIL
};

// Makes `ctx` current if it is not (one cuCtxGetCurrent when it is). Launches leave it
// current, like the runtime API does after a launch on a device.
void ensure_current(CUcontext ctx);

// Converts any stream-like object; None gives `fallback`'s stream.
Stream stream_arg(PyObject* obj, const Stream& fallback, const char* where);

}  // namespace nanocuda::py
