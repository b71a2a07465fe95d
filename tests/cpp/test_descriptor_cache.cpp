// DescriptorCache without a driver: what counts as the same geometry, the address rule, the
// ring of recent descriptors, keying on the context, and its per-parameter use (BoundTensorMap).
#include <gtest/gtest.h>

#include <cstring>

#include "nanocuda/driver/error.h"
#include "nanocuda/tma/bound_tensor_map.h"
#include "nanocuda/tma/descriptor_cache.h"

namespace nanocuda::detail {
namespace {

TiledParams seed001(std::uint64_t address) {
  TiledParams p;
  p.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  p.rank = 2;
  p.address = address;
  p.shape = {512, 512};
  p.box = {64, 64};
  p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  return p;
}

CUtensorMap marked(unsigned char tag) {
  CUtensorMap m;
  std::memset(&m, tag, sizeof m);
  return m;
}

const CUtensorMap kMarked2 = marked(2);
const auto kCtx = reinterpret_cast<CUcontext>(0x1000);
const auto kOtherCtx = reinterpret_cast<CUcontext>(0x2000);

TEST(DescriptorCache, SameGeometryIgnoresOnlyTheAddress) {
  DescriptorCache memo;
  TiledParams p = seed001(0x10000);
  EXPECT_FALSE(memo.same_geometry(p));  // nothing remembered yet
  memo.start(p, kCtx, marked(1));
  EXPECT_TRUE(memo.same_geometry(seed001(0x20000)));
  for (auto change : {+[](TiledParams& q) { q.shape[0] = 256; },
                      +[](TiledParams& q) { q.box[1] = 32; },
                      +[](TiledParams& q) { q.strides[0] = 2048; },
                      +[](TiledParams& q) { q.dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; },
                      +[](TiledParams& q) { q.options.swizzle.reset(); },
                      +[](TiledParams& q) { q.options.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA; },
                      +[](TiledParams& q) { q.options.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE; },
                      +[](TiledParams& q) { q.options.element_strides[0] = 2; }}) {
    TiledParams q = seed001(0x20000);
    change(q);
    EXPECT_FALSE(memo.same_geometry(q));
  }
}

TEST(DescriptorCache, MisalignedAddressIsNotTheSameGeometry) {
  // It must take the full validation, which names the alignment rule.
  DescriptorCache memo;
  TiledParams p = seed001(0x10000);
  memo.start(p, kCtx, marked(1));
  EXPECT_FALSE(memo.same_geometry(seed001(0x10008)));
  EXPECT_TRUE(memo.same_geometry(seed001(0x10010)));
}

TEST(DescriptorCache, RemembersTheLastFourAddressesPerContext) {
  DescriptorCache memo;
  TiledParams p = seed001(0x10000);
  memo.start(p, kCtx, marked(1));
  for (unsigned char k = 2; k <= 5; ++k) memo.add(0x10000 * k, marked(k));
  EXPECT_EQ(memo.find(0x10000, kCtx), nullptr);  // the oldest went when the fifth came
  for (unsigned char k = 2; k <= 5; ++k) {
    const CUtensorMap* m = memo.find(0x10000 * k, kCtx);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(reinterpret_cast<const unsigned char*>(m)[0], k);
  }
  EXPECT_EQ(reinterpret_cast<const unsigned char*>(memo.latest(kCtx))[0], 5);
  EXPECT_EQ(memo.find(0x20000, kOtherCtx), nullptr);
  EXPECT_EQ(memo.latest(kOtherCtx), nullptr);
  memo.clear();
  EXPECT_FALSE(memo.same_geometry(p));
}

TEST(DescriptorCache, NewGeometryForgetsTheOldDescriptors) {
  DescriptorCache memo;
  TiledParams p = seed001(0x10000);
  memo.start(p, kCtx, marked(1));
  TiledParams q = seed001(0x20000);
  q.shape[0] = 256;
  memo.start(q, kCtx, marked(2));
  EXPECT_EQ(memo.find(0x10000, kCtx), nullptr);
  EXPECT_NE(memo.find(0x20000, kCtx), nullptr);
  EXPECT_FALSE(memo.same_geometry(p));
}

TEST(DescriptorCache, GenerationsAreUniqueAndAtRefusesWithoutTheDriver) {
  DescriptorCache a, b;
  EXPECT_EQ(a.generation(), 0u);
  TiledParams p = seed001(0x10000);
  a.start(p, kCtx, marked(1));
  b.start(p, kCtx, marked(1));
  EXPECT_NE(a.generation(), 0u);
  EXPECT_NE(a.generation(), b.generation());  // another memo, same geometry: still distinct
  const auto before = a.generation();
  a.add(0x20000, marked(2));
  EXPECT_EQ(a.generation(), before);  // a new address is not a new geometry
  CUtensorMap out = marked(9);
  EXPECT_FALSE(a.at(0x10008, out));  // breaks the 16-byte rule: the caller validates in full
  DescriptorCache empty;
  EXPECT_FALSE(empty.at(0x10000, out));
  EXPECT_EQ(reinterpret_cast<const unsigned char*>(&out)[0], 9);  // untouched
  a.clear();
  EXPECT_EQ(a.generation(), 0u);
  EXPECT_FALSE(a.at(0x10000, out));
}


TensorGeometry tensor_of(const TiledParams& p) {
  return TensorGeometry{p.address, p.dtype, p.rank, p.shape, p.strides};
}

TEST(DescriptorCache, SameTensorComparesOnlyTheTensorHalf) {
  DescriptorCache cache;
  TiledParams p = seed001(0x10000);
  EXPECT_FALSE(cache.same_tensor(tensor_of(p)));  // nothing remembered yet
  cache.start(p, DescriptorCache::kAnyContext, marked(1));
  EXPECT_TRUE(cache.same_tensor(tensor_of(seed001(0x20000))));
  EXPECT_FALSE(cache.same_tensor(tensor_of(seed001(0x20008))));  // the address rule
  TiledParams q = seed001(0x20000);
  q.strides[0] = 2048;
  EXPECT_FALSE(cache.same_tensor(tensor_of(q)));
  q = seed001(0x20000);
  q.dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  EXPECT_FALSE(cache.same_tensor(tensor_of(q)));
}

TEST(DescriptorCache, AnyContextKeyServesEveryContextLookup) {
  // A bound parameter's cache files its descriptors under no context and looks them up the
  // same way; the per-thread key never matches it.
  DescriptorCache cache;
  cache.start(seed001(0x10000), DescriptorCache::kAnyContext, marked(1));
  EXPECT_NE(cache.find(0x10000, DescriptorCache::kAnyContext), nullptr);
  EXPECT_EQ(cache.find(0x10000, kCtx), nullptr);
}

TEST(BoundTensorMap, KnownAddressesNeedNoDriver) {
  TiledParams p = seed001(0x10000);
  TensorMap m;
  m.native() = kMarked2;
  nanocuda::BoundTensorMap bound(p, m);
  const CUtensorMap& out = bound.update(tensor_of(p));  // the template's own tensor
  EXPECT_EQ(std::memcmp(&out, &kMarked2, sizeof out), 0);
  EXPECT_EQ(bound.encodes(), 0u);
  EXPECT_EQ(bound.address_swaps(), 0u);
  nanocuda::BoundTensorMap copy = bound;  // what an overlapping Launcher call works on
  EXPECT_EQ(std::memcmp(&copy.update(tensor_of(p)), &kMarked2, sizeof out), 0);
}

TEST(BoundTensorMap, ABadNewGeometryRaisesAndKeepsTheCache) {
  TiledParams p = seed001(0x10000);
  TensorMap m;
  m.native() = kMarked2;
  nanocuda::BoundTensorMap bound(p, m);
  TiledParams bad = seed001(0x10000);
  bad.strides = {1032, 2};  // a row pitch that is no multiple of 16: refused before the driver
  EXPECT_THROW((void)bound.update(tensor_of(bad)), nanocuda::ValueError);
  EXPECT_EQ(bound.encodes(), 0u);
  EXPECT_EQ(std::memcmp(&bound.update(tensor_of(p)), &kMarked2, sizeof(CUtensorMap)), 0);
}

}  // namespace
}  // namespace nanocuda::detail
