// What a Python Launcher keeps between calls: the C++ bound launch (function, config, stream,
// aligned parameter buffer, context policy) plus the Python side's per-slot type decisions
// and bound tensor maps. Shared by the Launcher fast path and the _testing baseline loops.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <vector>

#include "launch/arg_pack.h"
#include "tma/bound_tensor_map.h"
#include "nanocuda/launch/bound_kernel.h"

namespace nanocuda::py {

struct LaunchState {
  BoundKernel bound;
  std::vector<ArgSlot> slots;
  std::vector<std::unique_ptr<BoundTensorMap>> bound_maps;  // per parameter, mostly empty
  ParamPacker packer;  // over bound.params()

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

// The state of a nanocuda.Launcher; TypeError for anything else.
LaunchState& launcher_state(nanobind::handle launcher);

// Converts any stream-like object; None gives `fallback`'s stream.
Stream stream_arg(PyObject* obj, const Stream& fallback, const char* where);

}  // namespace nanocuda::py
