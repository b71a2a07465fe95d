// TMA dtypes and enum spellings (CPU): DLPack mapping, refusals, names and parsing from the table.
#include <gtest/gtest.h>

#include <string>

#include "nanocuda/driver/error.h"
#include "nanocuda/tma/tma_dtype.h"
#include "nanocuda/tma/tma_names.h"
#include "nanocuda/tma/tensor_map.h"

namespace {

using nanocuda::dlpack::DataType;

CUtensorMapDataType map(std::uint8_t code, std::uint8_t bits) {
  return nanocuda::tma_data_type(DataType{code, bits, 1}, "x", "TensorMap.tiled");
}

TEST(TmaDtype, MapsBitsNotSignednessBelow32) {
  EXPECT_EQ(map(nanocuda::dlpack::kInt, 8), CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(map(nanocuda::dlpack::kUInt, 16), CU_TENSOR_MAP_DATA_TYPE_UINT16);
  EXPECT_EQ(map(nanocuda::dlpack::kInt, 32), CU_TENSOR_MAP_DATA_TYPE_INT32);
  EXPECT_EQ(map(nanocuda::dlpack::kUInt, 64), CU_TENSOR_MAP_DATA_TYPE_UINT64);
  EXPECT_EQ(map(nanocuda::dlpack::kFloat, 16), CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(map(nanocuda::dlpack::kBfloat, 16), CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(map(nanocuda::dlpack::kFloat8_e4m3fn, 8), CU_TENSOR_MAP_DATA_TYPE_UINT8);
}

TEST(TmaDtype, BoolIsRejectedNamingTheCallAndUint8) {
  try {
    (void)nanocuda::tma_data_type(DataType{nanocuda::dlpack::kBool, 8, 1}, "bool", "TensorMap.tiled");
    FAIL() << "bool was accepted";
  } catch (const nanocuda::TypeError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("TensorMap.tiled: dtype bool", 0), 0u) << m;
    EXPECT_NE(m.find("uint8"), std::string::npos) << m;
  }
}

TEST(TmaDtype, UnknownTypesNameTheDtype) {
  try {
    (void)nanocuda::tma_data_type(DataType{nanocuda::dlpack::kComplex, 64, 1}, "complex64", "f");
    FAIL();
  } catch (const nanocuda::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("f: unsupported dtype complex64"), std::string::npos);
  }
}

TEST(TmaNames, NamesAndParsingComeFromOneTable) {
  using nanocuda::TmaEnum;
  EXPECT_STREQ(nanocuda::swizzle_name(CU_TENSOR_MAP_SWIZZLE_128B), "128B");
  EXPECT_STREQ(nanocuda::oob_fill_name(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), "zero");
  EXPECT_STREQ(nanocuda::tensor_map_dtype_name(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16), "bfloat16");
  EXPECT_EQ(nanocuda::tensor_map_element_bits(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B), 4);
  EXPECT_EQ(nanocuda::tma_enum_by_name(TmaEnum::Swizzle, "128b"), CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(nanocuda::tma_enum_by_name(TmaEnum::Swizzle, "64"), CU_TENSOR_MAP_SWIZZLE_64B);
  EXPECT_EQ(nanocuda::tma_enum_by_name(TmaEnum::Swizzle, "auto"), nanocuda::kTmaSwizzleAuto);
  EXPECT_EQ(nanocuda::tma_enum_by_name(TmaEnum::OobFill, "none"), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  EXPECT_EQ(nanocuda::tma_enum_by_bytes(TmaEnum::L2Promotion, 256), CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_FALSE(nanocuda::tma_enum_by_bytes(TmaEnum::Interleave, 8).has_value());
  EXPECT_FALSE(nanocuda::tma_enum_by_name(TmaEnum::DataType, "16").has_value());
  EXPECT_EQ(nanocuda::tma_enum_choices(TmaEnum::Interleave), "0/'none', 16/'16B', 32/'32B'");
}

}  // namespace
