// TensorMap validation without a driver: each documented rule, accepted and rejected, and the
// innermost-first driver arguments it produces.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "nanocuda/driver/error.h"
#include "nanocuda/tma/tensor_map.h"

using namespace nanocuda;

namespace {

// 512x512 fp16, box 64x64: the benchmark workload.
TiledParams fp16_2d() {
  TiledParams p;
  p.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  p.rank = 2;
  p.address = 0x10000;
  p.shape = {512, 512};
  p.box = {64, 64};
  return p;
}

Im2colParams nhwc() {
  Im2colParams p;
  p.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  p.rank = 4;
  p.address = 0x10000;
  p.shape = {2, 16, 16, 64};  // N H W C
  p.lower_corner = {-1, -1};
  p.upper_corner = {-1, -1};
  p.channels_per_pixel = 64;
  p.pixels_per_column = 128;
  return p;
}

template <class P>
std::string error_of(const P& p) {
  try {
    TensorMap::validate(p);
  } catch (const ValueError& e) {
    return std::string("ValueError: ") + e.what();
  } catch (const TypeError& e) {
    return std::string("TypeError: ") + e.what();
  }
  return "accepted";
}

#define EXPECT_REJECTED(p, text) \
  EXPECT_NE(error_of(p).find(text), std::string::npos) << "got: " << error_of(p)
#define EXPECT_ACCEPTED(p) EXPECT_EQ(error_of(p), "accepted")

}  // namespace

TEST(TensorMap, ValueTypeLayout) {
  EXPECT_EQ(sizeof(TensorMap), 128u);
  EXPECT_EQ(alignof(TensorMap) % 64, 0u);
  TensorMap a;
  for (std::byte b : a.bytes()) EXPECT_EQ(b, std::byte{0});
  std::byte raw[128];
  for (int i = 0; i < 128; ++i) raw[i] = std::byte(i);
  TensorMap b = TensorMap::from_bytes(std::span<const std::byte, 128>(raw, 128));
  EXPECT_EQ(std::memcmp(b.data(), raw, 128), 0);
  TensorMap c = b;
  EXPECT_TRUE(c == b);
  EXPECT_FALSE(a == b);
}

TEST(TensorMap, DriverArgsAreInnermostFirst) {
  TiledParams p = fp16_2d();
  p.shape = {256, 512};
  p.box = {32, 64};
  p.options.element_strides = {2, 1};
  auto a = TensorMap::validate(p);
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.global_dim[0], 512u);
  EXPECT_EQ(a.global_dim[1], 256u);
  EXPECT_EQ(a.global_strides[0], 1024u);  // compact: 512 * 2 bytes
  EXPECT_EQ(a.box_dim[0], 64u);
  EXPECT_EQ(a.box_dim[1], 32u);
  EXPECT_EQ(a.element_strides[0], 1u);
  EXPECT_EQ(a.element_strides[1], 2u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);  // auto: 64 x 2 bytes = 128
  EXPECT_EQ(a.l2_promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(a.address, reinterpret_cast<void*>(0x10000));
}

TEST(TensorMap, ExplicitStridesRank5) {
  TiledParams p;
  p.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  p.rank = 5;
  p.address = 0x20000;
  p.shape = {2, 3, 4, 5, 8};
  p.strides = {4096, 1024, 256, 48, 4};  // padded rows
  p.box = {1, 2, 3, 4, 8};
  auto a = TensorMap::validate(p);
  EXPECT_EQ(a.global_strides[0], 48u);
  EXPECT_EQ(a.global_strides[3], 4096u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_32B);
}

TEST(TensorMap, AutoSwizzle) {
  EXPECT_EQ(auto_swizzle(128), CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(auto_swizzle(64), CU_TENSOR_MAP_SWIZZLE_64B);
  EXPECT_EQ(auto_swizzle(32), CU_TENSOR_MAP_SWIZZLE_32B);
  EXPECT_EQ(auto_swizzle(256), CU_TENSOR_MAP_SWIZZLE_NONE);
  EXPECT_EQ(auto_swizzle(16), CU_TENSOR_MAP_SWIZZLE_NONE);
}

TEST(TensorMap, Rank) {
  for (std::uint32_t r = 1; r <= 5; ++r) {
    TiledParams p = fp16_2d();
    p.rank = r;
    p.shape = {8, 8, 8, 8, 8};
    p.box = {1, 1, 1, 1, 1};
    p.shape[r - 1] = 64;
    p.box[r - 1] = 64;
    EXPECT_ACCEPTED(p);
  }
  TiledParams p = fp16_2d();
  p.rank = 0;
  EXPECT_REJECTED(p, "TensorMap::tiled: rank must be 1..5, got 0");
  p.rank = 6;
  EXPECT_REJECTED(p, "rank must be 1..5, got 6");
  Im2colParams q = nhwc();
  q.rank = 2;
  EXPECT_REJECTED(q, "TensorMap::im2col: rank must be 3..5");
  q.rank = 6;
  EXPECT_REJECTED(q, "got 6");
}

TEST(TensorMap, Address) {
  TiledParams p = fp16_2d();
  p.address = 0x10010;
  EXPECT_ACCEPTED(p);
  p.address = 0x10008;
  EXPECT_REJECTED(p, "global address must be 16-byte aligned, got 0x10008");
  p.rank = 3;
  p.shape = {4, 64, 64};
  p.box = {1, 8, 16};
  p.options.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
  p.address = 0x10010;
  EXPECT_REJECTED(p, "32-byte aligned with 32B interleave, got 0x10010");
  p.address = 0x10020;
  EXPECT_ACCEPTED(p);
}

TEST(TensorMap, Shape) {
  TiledParams p = fp16_2d();
  p.shape = {0, 512};
  EXPECT_REJECTED(p, "shape[0] = 0: every dimension must be 1..2^32 elements");
  p.shape = {(1ull << 32) + 1, 512};
  EXPECT_REJECTED(p, "shape[0] = 4294967297");
  p.shape = {1ull << 32, 512};
  p.strides = {1024, 2};
  EXPECT_ACCEPTED(p);
}

TEST(TensorMap, Strides) {
  TiledParams p = fp16_2d();
  p.strides = {1024, 2};
  EXPECT_ACCEPTED(p);
  p.strides = {1040, 2};  // padded rows
  EXPECT_ACCEPTED(p);
  p.strides = {1000, 2};
  EXPECT_REJECTED(p, "strides[0] = 1000 bytes: global strides must be multiples of 16 bytes");
  p.strides = {1024, 4};
  EXPECT_REJECTED(p, "strides[1] = 4 bytes: the innermost dimension must be contiguous");
  p.strides = {1ull << 40, 2};
  EXPECT_REJECTED(p, "global strides must be < 2^40 bytes");
  p.strides = {(1ull << 40) - 16, 2};
  EXPECT_ACCEPTED(p);
  // A compact shape whose row is not a multiple of 16 bytes.
  p = fp16_2d();
  p.shape = {4, 100};
  p.box = {4, 64};
  EXPECT_REJECTED(p, "strides[0] = 200 bytes: global strides must be multiples of 16 bytes "
                     "(computed from the compact shape)");
}

TEST(TensorMap, Box) {
  TiledParams p = fp16_2d();
  p.box = {256, 64};
  EXPECT_ACCEPTED(p);
  p.box = {257, 64};
  EXPECT_REJECTED(p, "box[0] = 257: box sizes must be 1..256 elements");
  p.box = {0, 64};
  EXPECT_REJECTED(p, "box[0] = 0");
  // Boxes may be larger than the tensor (the rest is OOB fill).
  p = fp16_2d();
  p.shape = {10, 24};
  p.strides = {64, 2};
  p.box = {64, 64};
  EXPECT_ACCEPTED(p);
}

TEST(TensorMap, InnerBoxMultipleOf16) {
  TiledParams p = fp16_2d();
  p.box = {64, 12};  // 24 bytes
  p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  EXPECT_REJECTED(p, "the inner box row is 24 bytes (box[-1] = 12 x float16): it must be a "
                     "multiple of 16 bytes");
  p.box = {64, 8};
  EXPECT_ACCEPTED(p);
}

// Measured on the H100 (driver 13.0): the driver takes at most 228 KiB per box, counting
// every element_strides-th element.
TEST(TensorMap, BoxFitsSharedMemory) {
  TiledParams p = fp16_2d();
  p.rank = 3;
  p.shape = {8, 512, 512};
  p.strides = {};
  p.box = {8, 256, 64};  // 256 KiB
  p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  EXPECT_REJECTED(p, "the box is 262144 bytes");
  p.options.element_strides = {2, 1, 1};  // 128 KiB land in shared memory
  EXPECT_ACCEPTED(p);
}

TEST(TensorMap, SwizzleSpan) {
  struct Case {
    CUtensorMapSwizzle swizzle;
    std::uint32_t max_fp16;
  };
  for (Case c : {Case{CU_TENSOR_MAP_SWIZZLE_32B, 16}, Case{CU_TENSOR_MAP_SWIZZLE_64B, 32},
                 Case{CU_TENSOR_MAP_SWIZZLE_128B, 64}, Case{CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B, 64}}) {
    TiledParams p = fp16_2d();
    p.options.swizzle = c.swizzle;
    p.box = {64, c.max_fp16};
    EXPECT_ACCEPTED(p);
    p.box = {64, c.max_fp16 * 2};
    EXPECT_REJECTED(p, "swizzle span of");
  }
  TiledParams p = fp16_2d();
  p.box = {64, 128};
  p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  EXPECT_REJECTED(p, "the inner box row is 256 bytes (box[-1] = 128 x float16): it must fit "
                     "the 128B swizzle span of 128 bytes");
  p.options.swizzle.reset();  // auto: none for 256-byte rows
  EXPECT_EQ(TensorMap::validate(p).swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  p.options.swizzle = static_cast<CUtensorMapSwizzle>(9);
  EXPECT_REJECTED(p, "unknown swizzle 9");
}

TEST(TensorMap, ElementStrides) {
  TiledParams p = fp16_2d();
  p.options.element_strides = {8, 1};
  EXPECT_ACCEPTED(p);
  p.options.element_strides = {9, 1};
  EXPECT_REJECTED(p, "element_strides[0] = 9: element strides must be 1..8");
  p.options.element_strides = {1, 0};
  EXPECT_REJECTED(p, "element_strides[1] = 0");
}

TEST(TensorMap, Dtype) {
  TiledParams p = fp16_2d();
  p.dtype = static_cast<CUtensorMapDataType>(42);
  EXPECT_REJECTED(p, "TypeError: TensorMap::tiled: unsupported TMA dtype 42");
  for (auto t : {CU_TENSOR_MAP_DATA_TYPE_UINT8, CU_TENSOR_MAP_DATA_TYPE_INT32,
                 CU_TENSOR_MAP_DATA_TYPE_FLOAT64, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                 CU_TENSOR_MAP_DATA_TYPE_TFLOAT32}) {
    p.dtype = t;
    p.box = {8, 16};
    p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    EXPECT_ACCEPTED(p) << tensor_map_dtype_name(t);
  }
}

TEST(TensorMap, Interleave) {
  TiledParams p;
  p.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  p.rank = 2;
  p.address = 0x10000;
  p.shape = {64, 64};
  p.box = {8, 8};
  p.options.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
  EXPECT_REJECTED(p, "rank must be >= 3 with 16B interleave, got 2");
  p.rank = 3;
  p.shape = {4, 64, 8};  // NC/8HWC8 as (C/8 * H, W, C8)
  p.box = {1, 8, 8};
  EXPECT_ACCEPTED(p);
  EXPECT_EQ(TensorMap::validate(p).swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  p.options.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
  p.shape = {4, 64, 16};
  p.box = {1, 8, 16};
  EXPECT_EQ(TensorMap::validate(p).swizzle, CU_TENSOR_MAP_SWIZZLE_32B);  // auto
  p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  EXPECT_REJECTED(p, "32B interleave requires swizzle 32B, got 128B");
  p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
  p.strides = {2048, 48, 2};
  EXPECT_REJECTED(p, "global strides must be multiples of 32 bytes with 32B interleave");
  p.options.interleave = static_cast<CUtensorMapInterleave>(3);
  EXPECT_REJECTED(p, "unknown interleave 3");
}

TEST(TensorMap, OobFillAndEnums) {
  TiledParams p = fp16_2d();
  p.options.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  EXPECT_ACCEPTED(p);
  p.dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  p.box = {64, 128};
  EXPECT_REJECTED(p, "oob_fill nan requires a floating-point dtype, got uint8");
  p = fp16_2d();
  p.options.l2_promotion = static_cast<CUtensorMapL2promotion>(7);
  EXPECT_REJECTED(p, "unknown l2_promotion 7");
  p = fp16_2d();
  p.options.oob_fill = static_cast<CUtensorMapFloatOOBfill>(2);
  EXPECT_REJECTED(p, "unknown oob_fill 2");
}

TEST(TensorMap, PackedTypes) {
  TiledParams p;
  p.dtype = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
  p.rank = 2;
  p.address = 0x10020;
  p.shape = {4, 256};
  p.box = {4, 128};
  EXPECT_ACCEPTED(p);
  p.address = 0x10010;
  EXPECT_REJECTED(p, "32-byte aligned for packed 16-byte types");
  p.address = 0x10020;
  p.shape = {4, 192};
  EXPECT_REJECTED(p, "must be a multiple of 128");
  p.shape = {4, 256};
  p.box = {4, 64};
  p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  EXPECT_REJECTED(p, "the inner box of 16u4_align16b must be 128");
  p.box = {4, 128};
  p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B;
  EXPECT_REJECTED(p, "swizzle 128B_atom_32B_flip_8B is not supported for 16u4_align16b");
  p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;  // store-only, and only for U6
  EXPECT_REJECTED(p, "not supported");
  TiledParams q;
  q.dtype = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
  q.rank = 2;
  q.address = 0x10000;
  q.shape = {4, 33};
  q.box = {4, 32};
  EXPECT_REJECTED(q, "must be even");
  q.options.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  TiledParams r = p;
  r.dtype = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
  r.rank = 3;
  r.shape = {2, 4, 256};
  r.box = {1, 4, 128};
  r.options.swizzle.reset();
  r.options.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
  EXPECT_REJECTED(r, "dtype 16U6_align16B requires interleave none");
}

TEST(TensorMap, Im2col) {
  Im2colParams p = nhwc();
  auto a = TensorMap::validate(p);
  EXPECT_EQ(a.global_dim[0], 64u);  // C innermost
  EXPECT_EQ(a.global_dim[3], 2u);
  EXPECT_EQ(a.global_strides[0], 128u);  // W stride: 64 * 2
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(a.channels_per_pixel, 64u);
  p.lower_corner = {-2, -1};  // {H, W}; the driver wants {W, H}
  a = TensorMap::validate(p);
  EXPECT_EQ(a.lower_corner[0], -1);
  EXPECT_EQ(a.lower_corner[1], -2);

  p = nhwc();
  p.channels_per_pixel = 0;
  EXPECT_REJECTED(p, "channels_per_pixel = 0: must be 1..256");
  p.channels_per_pixel = 257;
  EXPECT_REJECTED(p, "channels_per_pixel = 257");
  p = nhwc();
  p.pixels_per_column = 1025;
  EXPECT_REJECTED(p, "pixels_per_column = 1025: must be 1..1024");
  p = nhwc();
  p.lower_corner = {-129, 0};
  EXPECT_REJECTED(p, "lower_corner[0] = -129: with rank 4 corner offsets must be in [-128, 127]");
  p = nhwc();
  p.rank = 5;
  p.shape = {1, 4, 4, 4, 64};
  p.lower_corner = {0, 0, 0};
  p.upper_corner = {0, 16, 0};
  EXPECT_REJECTED(p, "upper_corner[1] = 16: with rank 5 corner offsets must be in [-16, 15]");
  p = nhwc();
  p.rank = 3;
  p.shape = {1, 100, 64};
  p.lower_corner = {-1000};
  p.upper_corner = {1000};
  EXPECT_ACCEPTED(p);
  p.lower_corner = {50};
  p.upper_corner = {-50};
  EXPECT_REJECTED(p, "the bounding box has zero area along spatial dim 0");
  p = nhwc();
  p.channels_per_pixel = 128;  // 256 bytes
  EXPECT_ACCEPTED(p);            // auto swizzle: none
  p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  EXPECT_REJECTED(p, "(channels_per_pixel = 128 x float16): it must fit the 128B swizzle");
}

TEST(TensorMap, Describe) {
  TiledParams p = fp16_2d();
  EXPECT_EQ(describe(p),
            "dtype=float16, rank=2, address=0x10000, shape=(512, 512), strides=(0, 0) bytes, "
            "box=(64, 64), element_strides=(1, 1), interleave=none, swizzle=auto, "
            "l2_promotion=128B, oob_fill=zero");
  EXPECT_NE(describe(nhwc()).find("lower_corner=(-1, -1)"), std::string::npos);
}

TEST(TensorMap, EncodeWithoutDriverValidatesFirst) {
  TiledParams p = fp16_2d();
  p.box = {300, 64};
  EXPECT_THROW((void)TensorMap::tiled(p), ValueError);
  TensorMap m;
  EXPECT_THROW(m.replace_address(0x1008), ValueError);
}

TEST(TensorMap, MemoAnswersOnlyItsOwnGeneration) {
  // Nothing remembered on a fresh thread: generation 0, and no generation finds a descriptor
  // (the binding's per-launch path then calls tiled()).
  std::thread([] {
    EXPECT_EQ(TensorMap::tiled_memo_generation(), 0u);
    alignas(64) CUtensorMap map{};
    EXPECT_FALSE(TensorMap::tiled_from_memo(0, 0x10000, map));
    EXPECT_FALSE(TensorMap::tiled_from_memo(7, 0x10000, map));
  }).join();
}
