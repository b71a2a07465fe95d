// What a Python Launcher keeps between calls: the C++ Launcher (function, config, stream,
// parameter buffer and packer, re-entrancy, context policy) plus the Python side's per-slot
// type decisions and bound tensor maps. Shared by the Launcher fast path and the bench loops.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <optional>
#include <vector>

#include "launch/arg_pack.h"
#include "tma/bound_tensor_map.h"
#include "nanocuda/launch/launcher.h"

namespace nanocuda::py {

struct LaunchState {
  Launcher bound;
  int bound_device;  // bound.stream()'s device ordinal
  std::vector<ArgSlot> slots;
  std::vector<std::unique_ptr<BoundTensorMap>> bound_maps;  // per parameter, mostly empty

  LaunchState(const Kernel& k, const LaunchConfig& c, StreamRef s);
  LaunchState(const LaunchState&) = delete;
  LaunchState& operator=(const LaunchState&) = delete;

  // Packs `args` and launches on `on` (the bound stream unless overridden), of device `device`.
  // Packing can run Python code (a __cuda_array_interface__ property, the first-sight hook),
  // and with it another thread or a nested call of this Launcher: the Launcher gives such a
  // call a buffer of its own, and it packs with slots and bound-map copies of its own.
  void call(PyObject* const* args, std::size_t n, StreamRef on, int device);

 private:
  // A call that arrives while another is still packing: the Launcher's own buffer is in use.
  [[gnu::noinline]] void call_nested(PyObject* const* args, std::size_t n, StreamRef on);
};

// The state of a nanocuda.Launcher; TypeError for anything else.
LaunchState& launcher_state(nanobind::handle launcher);

// Views any stream-like object (a foreign one is adopted into `adopted`, which the view
// needs alive); None gives `fallback`.
StreamRef stream_arg(PyObject* obj, StreamRef fallback, const char* where);

}  // namespace nanocuda::py
