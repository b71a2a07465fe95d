// What a bound launch keeps between calls: the kernel's function in the stream's context,
// the config, an aligned parameter buffer pre-wired to the kernel's layout, and per-slot
// type decisions. Shared by the Launcher fast path and the C++ baseline loops.
#pragma once

#include <cstdlib>
#include <memory>
#include <vector>

#include "arg_pack.h"
#include "bound_tensor_map.h"
#include "nanocuda/kernel.h"
#include "nanocuda/launch.h"

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
};

// Makes `ctx` current if it is not (one cuCtxGetCurrent when it is). Launches leave it
// current, like the runtime API does after a launch on a device.
void ensure_current(CUcontext ctx);

// Converts any stream-like object; None gives `fallback`'s stream.
Stream stream_arg(PyObject* obj, const Stream& fallback, const char* where);

}  // namespace nanocuda::py
