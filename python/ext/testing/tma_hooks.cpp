// _testing hooks of TMA: the raw driver encode (tests compare nanocuda's bytes with it), the
// driver's own encode/address-swap cost in a C++ loop, and the thread descriptor cache's counters.
#include <nanobind/nanobind.h>

#include <chrono>
#include <cstdint>

#include "bindings.h"
#include "nanocuda/core/any_context.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/tma/tensor_map.h"
#include "nanocuda/tma/descriptor_cache.h"
#include "tma/tensor_map_args.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace nanocuda::py {

namespace {

// The raw driver call, arguments innermost first exactly as cuda.h takes them,
// so tests can check nanocuda's descriptor is byte-identical.
nb::bytes encode_tiled_raw(int dtype, std::uint32_t rank, std::uint64_t ptr, nb::handle dims,
                           nb::handle strides, nb::handle box, nb::handle estr, int interleave,
                           int swizzle, int l2, int oob) {
  cuuint64_t d[5]{}, s[5]{};
  cuuint32_t b[5]{}, e[5]{};
  read_dims(dims, d, rank, "global_dim", "encode_tiled_raw");
  if (rank > 1) read_dims(strides, s, rank - 1, "global_strides", "encode_tiled_raw");
  read_box(box, b, rank, "box_dim", "encode_tiled_raw");
  read_box(estr, e, rank, "element_strides", "encode_tiled_raw");
  detail::AnyContext context;  // the encode needs a current context, as nanocuda's own path has
  alignas(64) CUtensorMap m;  // the driver wants 64-byte alignment
  NANOCUDA_CALL(cuTensorMapEncodeTiled, "encode_tiled_raw", &m,
                static_cast<CUtensorMapDataType>(dtype), rank,
                reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr)), d, s, b, e,
                static_cast<CUtensorMapInterleave>(interleave),
                static_cast<CUtensorMapSwizzle>(swizzle), static_cast<CUtensorMapL2promotion>(l2),
                static_cast<CUtensorMapFloatOOBfill>(oob));
  return nb::bytes(reinterpret_cast<const char*>(&m), sizeof m);
}

}  // namespace

void bind_tma_hooks(nb::module_& parent) {
  nb::module_ m = testing_module(parent);
  m.def("tiled_memo_stats", [] {
          const auto& st = detail::DescriptorCache::for_this_thread().stats;
          return nb::make_tuple(st.encodes, st.address_swaps, st.reuses);
        }, "(full encodes, address swaps, reuses) of TensorMap tiled maps on this thread (tests).");
  m.def("tiled_memo_clear", [] { detail::DescriptorCache::for_this_thread().clear(); },
        "Forgets this thread's remembered tiled geometry (tests, benchmarks of the miss path).");
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
  m.def("encode_tiled_raw", &encode_tiled_raw, "dtype"_a, "rank"_a, "ptr"_a, "global_dim"_a,
        "global_strides"_a, "box_dim"_a, "element_strides"_a, "interleave"_a, "swizzle"_a,
        "l2_promotion"_a, "oob_fill"_a);
}

}  // namespace nanocuda::py
