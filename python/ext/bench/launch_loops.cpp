// Native baselines for `nanocuda bench launch/tma` (in _bench): straight driver calls on a
// Launcher's packed bytes, the seed TMA workloads, and the driver's own encode cost.
#include <nanobind/nanobind.h>

#include <chrono>
#include <cstdint>

#include "bindings.h"
#include "launch/launch_state.h"
#include "nanocuda/core/any_context.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/launch/detail/launch_context.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace nanocuda::py {

namespace {

// `count` cuLaunchKernel calls with the launcher's packed parameters; returns nanoseconds.
std::int64_t cpp_launch_burst(nb::handle launcher, int count) {
  Launcher& b = launcher_state(launcher).bound;
  const auto& api = detail::driver();
  make_launch_context_current(b.context());
  const LaunchConfig& c = b.config();
  CUstream h = b.stream().handle();
  CUfunction f = b.function();
  void** params = b.params().pointers();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i)
    api.cuLaunchKernel(f, c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z,
                       c.shared_mem, h, params, nullptr);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

// The seed-001 workload in native C++: `count` iterations of 3 cuTensorMapEncodeTiled calls
// (512x512 fp16, box 64x64, 128B swizzle, L2 128B), plus, when a launcher is given, a launch
// of its kernel with the 3 maps (the seed-000 shape done naively). Returns nanoseconds.
std::int64_t cpp_tma_burst(std::uint64_t a, std::uint64_t b, std::uint64_t c, int count,
                           nb::handle launcher) {
  const auto& api = detail::driver();
  Launcher* st = launcher.is_none() ? nullptr : &launcher_state(launcher).bound;
  if (st) make_launch_context_current(st->context());
  const cuuint64_t dims[2] = {512, 512};
  const cuuint64_t strides[1] = {512 * 2};
  const cuuint32_t box[2] = {64, 64};
  const cuuint32_t elem[2] = {1, 1};
  const std::uint64_t ptrs[3] = {a, b, c};
  alignas(128) CUtensorMap maps[3];
  void* params[3] = {&maps[0], &maps[1], &maps[2]};
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    for (int m = 0; m < 3; ++m)
      api.cuTensorMapEncodeTiled(&maps[m], CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                                 reinterpret_cast<void*>(ptrs[m]), dims, strides, box, elem,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (st) {
      const LaunchConfig& cfg = st->config();
      api.cuLaunchKernel(st->function(), cfg.grid.x, cfg.grid.y, cfg.grid.z,
                         cfg.block.x, cfg.block.y, cfg.block.z, cfg.shared_mem,
                         st->stream().handle(), params, nullptr);
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

}  // namespace

void bind_launch_loops(nb::module_& parent) {
  nb::module_ m = bench_module(parent);
  m.def("cpp_launch_burst", &cpp_launch_burst, nb::arg("launcher"), nb::arg("count"),
        "Native C++ loop: `count` cuLaunchKernel calls with the launcher's packed "
        "arguments; returns elapsed nanoseconds (benchmark baseline).");
  m.def("cpp_tma_burst", &cpp_tma_burst, nb::arg("a"), nb::arg("b"), nb::arg("c"),
        nb::arg("count"), nb::arg("launcher") = nb::none(),
        "Native C++ loop of the seed-001/000 workloads (benchmark baseline); nanoseconds.");
  m.def("tma_driver_ns", [](std::uint64_t ptr, int count) {
          // The driver's own cost, in a C++ loop: a full encode of the seed-001 map, and an
          // address swap on it (what a remembered geometry at a new address costs).
          const auto& api = detail::driver();
          detail::AnyContext context;
          const cuuint64_t dims[2] = {512, 512};
          const cuuint64_t strides[1] = {1024};
          const cuuint32_t box[2] = {64, 64}, elem[2] = {1, 1};
          alignas(128) CUtensorMap map;
          auto encode = [&](std::uint64_t p) {
            return api.cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                                              reinterpret_cast<void*>(p), dims, strides, box, elem,
                                              CU_TENSOR_MAP_INTERLEAVE_NONE,
                                              CU_TENSOR_MAP_SWIZZLE_128B,
                                              CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
          };
          detail::check(encode(ptr), "cuTensorMapEncodeTiled", "tma_driver_ns");
          auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < count; ++i) encode(ptr + 256 * (i & 15));
          auto t1 = std::chrono::steady_clock::now();
          for (int i = 0; i < count; ++i)
            api.cuTensorMapReplaceAddress(&map, reinterpret_cast<void*>(ptr + 256 * (i & 15)));
          auto t2 = std::chrono::steady_clock::now();
          auto ns = [&](auto a, auto b) {
            return std::chrono::duration<double, std::nano>(b - a).count() / count;
          };
          nb::dict d;
          d["encode"] = ns(t0, t1);
          d["replace_address"] = ns(t1, t2);
          return d;
        }, "ptr"_a, "count"_a, "Driver cost of encode vs address swap in a C++ loop (ns; bench).");
}

}  // namespace nanocuda::py
