// Packing against hand-built parameter layouts: every argument kind and every error.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "nanocuda/driver/error.h"
#include "nanocuda/launch/detail/launch_packed.h"
#include "nanocuda/launch/param_packer.h"

using namespace nanocuda;

namespace {

// (const void*, int, float, double, char, short, struct{int a,b,c;}) as nvcc lays it out.
ParamLayout mixed_layout() {
  return ParamLayout{{{0, 8}, {8, 4}, {12, 4}, {16, 8}, {24, 1}, {26, 2}, {28, 12}}};
}

template <class T>
T read(const unsigned char* storage, std::uint32_t offset) {
  T v;
  std::memcpy(&v, storage + offset, sizeof v);
  return v;
}

}  // namespace

TEST(ParamPacker, WritesEveryKindAtItsOffset) {
  ParamLayout layout = mixed_layout();
  alignas(16) unsigned char storage[64] = {};
  void* ptrs[7];
  ParamPacker p(layout, "mixed", storage, ptrs);
  p.check_count(7);
  p.write_pointer(0, 0xDEADBEEF00ull);
  p.write_int(1, -5);
  p.write_float(2, 1.5);
  p.write_float(3, 2.25);
  p.write_int(4, 200);
  p.write_int(5, -300);
  int s[3] = {1, 2, 3};
  p.write_bytes(6, s, sizeof s, "struct");
  EXPECT_EQ(read<std::uint64_t>(storage, 0), 0xDEADBEEF00ull);
  EXPECT_EQ(read<std::int32_t>(storage, 8), -5);
  EXPECT_EQ(read<float>(storage, 12), 1.5f);
  EXPECT_EQ(read<double>(storage, 16), 2.25);
  EXPECT_EQ(read<unsigned char>(storage, 24), 200);
  EXPECT_EQ(read<std::int16_t>(storage, 26), -300);
  EXPECT_EQ(read<int>(storage, 36), 3);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(ptrs[i], storage + layout.params[i].offset);
}

TEST(ParamPacker, UnsignedValuesUseTheFullRange) {
  ParamLayout layout{{{0, 4}, {8, 8}}};
  alignas(16) unsigned char storage[16] = {};
  void* ptrs[2];
  ParamPacker p(layout, "k", storage, ptrs);
  p.write_int(0, 0xFFFFFFFFll);
  p.write_uint(1, 0xFFFFFFFFFFFFFFFFull);
  EXPECT_EQ(read<std::uint32_t>(storage, 0), 0xFFFFFFFFu);
  EXPECT_EQ(read<std::uint64_t>(storage, 8), 0xFFFFFFFFFFFFFFFFull);
}

TEST(ParamPacker, ErrorsNameKernelParameterAndSizes) {
  ParamLayout layout = mixed_layout();
  alignas(16) unsigned char storage[64] = {};
  void* ptrs[7];
  ParamPacker p(layout, "mixed", storage, ptrs);
  try {
    p.check_count(3);
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(), "kernel 'mixed' takes 7 arguments, got 3");
  }
  try {
    p.write_pointer(1, 0x1000);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "kernel 'mixed', parameter 1: expects 4 bytes, got 8 bytes (device pointer)");
  }
  try {
    p.write_int(1, 1ll << 40);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit in 4 bytes"), std::string::npos);
  }
  EXPECT_THROW(p.write_int(4, 256), ValueError);
  EXPECT_THROW(p.write_int(5, 70000), ValueError);
  EXPECT_THROW(p.write_bool(1, true), ValueError);
  EXPECT_THROW(p.write_uint(1, 0xFFFFFFFFFFull), ValueError);
  int two[2] = {1, 2};
  try {
    p.write_bytes(6, two, sizeof two, "bytes");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "kernel 'mixed', parameter 6: expects 12 bytes, got 8 bytes (bytes)");
  }
}

TEST(TypedLaunch, ChecksCountAndSizesBeforeTheDriver) {
  ParamLayout layout{{{0, 8}, {8, 4}}};
  detail::LaunchTarget target{nullptr, "typed", &layout, nullptr};
  EXPECT_NO_THROW((detail::check_typed_args<const void*, int>(target)));
  EXPECT_THROW((detail::check_typed_args<const void*>(target)), TypeError);
  EXPECT_THROW((detail::check_typed_args<const void*, double>(target)), ValueError);  // 8 != 4
}
