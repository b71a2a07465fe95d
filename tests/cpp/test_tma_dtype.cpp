// DLPack data types to TMA element types (CPU): the mapping and each refusal's message.
#include <gtest/gtest.h>

#include <string>

#include "nanocuda/driver/error.h"
#include "nanocuda/tma/tma_dtype.h"

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

}  // namespace
