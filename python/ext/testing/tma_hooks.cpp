// _testing hooks of TMA: the raw driver encode (tests compare nanocuda's bytes with it) and the
// thread descriptor cache's counters.
#include <nanobind/nanobind.h>

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
  m.def("encode_tiled_raw", &encode_tiled_raw, "dtype"_a, "rank"_a, "ptr"_a, "global_dim"_a,
        "global_strides"_a, "box_dim"_a, "element_strides"_a, "interleave"_a, "swizzle"_a,
        "l2_promotion"_a, "oob_fill"_a);
}

}  // namespace nanocuda::py
