// BoundTensorMap on a real driver: every path (reuse, address swap, new geometry) gives the
// bytes of a fresh cuTensorMapEncodeTiled of the same arguments (skipped without a GPU).
#include <gtest/gtest.h>

#include <cstring>

#include "gpu_test.h"
#include "nanocuda/core/any_context.h"
#include "nanocuda/driver/driver_api.h"
#include "nanocuda/nanocuda.h"

namespace nanocuda {
namespace {

// The raw driver call on TensorMap::validate's arguments: no cache anywhere.
CUtensorMap raw(const TiledParams& p) {
  const TensorMapDriverArgs a = TensorMap::validate(p);
  detail::AnyContext context;
  CUtensorMap m;
  EXPECT_EQ(detail::driver().cuTensorMapEncodeTiled(&m, a.dtype, a.rank, a.address, a.global_dim,
                                                     a.global_strides, a.box_dim, a.element_strides,
                                                     a.interleave, a.swizzle, a.l2_promotion,
                                                     a.oob_fill),
            CUDA_SUCCESS);
  return m;
}

TiledParams fp16(std::uint64_t address, std::uint64_t rows) {
  TiledParams p;
  p.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  p.rank = 2;
  p.address = address;
  p.shape = {rows, 512};
  p.strides = {1024, 2};
  p.box = {64, 64};
  return p;  // swizzle "auto": 128B
}

TensorGeometry tensor_of(const TiledParams& p) {
  return TensorGeometry{p.address, p.dtype, p.rank, p.shape, p.strides};
}

TEST(BoundTensorMapGpu, EveryPathMatchesAFreshEncode) {
  NANOCUDA_REQUIRE_GPU();
  Device d(0);
  Stream s = Stream::create(d);
  Buffer memory(1024 * 1024, s);
  const std::uint64_t base = memory.ptr();
  const TiledParams first = fp16(base, 512);
  BoundTensorMap bound(first, TensorMap::tiled(first));
  // template's tensor, 5 new addresses (the ring of 4 overflows), two old ones, a new geometry
  const std::uint64_t offsets[] = {0, 1, 2, 3, 4, 5, 1, 5};
  for (std::uint64_t k : offsets) {
    const TiledParams p = fp16(base + 256 * k, 512);
    const CUtensorMap want = raw(p);
    EXPECT_EQ(std::memcmp(&bound.update(tensor_of(p)), &want, sizeof want), 0) << "offset " << k;
  }
  EXPECT_EQ(bound.encodes(), 0u);
  EXPECT_EQ(bound.address_swaps(), 6u);  // 1..5, then 1 again (it left the ring)
  const TiledParams other = fp16(base, 256);
  const CUtensorMap want = raw(other);
  EXPECT_EQ(std::memcmp(&bound.update(tensor_of(other)), &want, sizeof want), 0);
  EXPECT_EQ(bound.encodes(), 1u);
}

}  // namespace
}  // namespace nanocuda
