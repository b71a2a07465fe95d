// The texture/surface and checkpoint rules the core checks before any driver call (no GPU needed).
#include <gtest/gtest.h>

#include <string>

#include "nanocuda/core/checkpoint.h"
#include "nanocuda/core/device.h"
#include "nanocuda/core/opaque_array.h"
#include "nanocuda/core/texture_object.h"
#include "nanocuda/driver/error.h"

using namespace nanocuda;

namespace {

template <class F>
std::string value_error(F&& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "no ValueError";
}

}  // namespace

TEST(ArrayShape, FormatsChannelsAndExtents) {
  EXPECT_EQ(array_format_from_name("float16", "t"), ArrayFormat::float16);
  EXPECT_EQ(array_format_bytes(ArrayFormat::int16), 2u);
  EXPECT_NE(value_error([] { (void)array_format_from_name("float64", "t"); }).find("no ArrayFormatType equivalent"),
            std::string::npos);
  ArrayShape s = make_array_shape({32, 16}, ArrayFormat::float32, 2, false, "t");
  EXPECT_EQ(s.element_bytes(), 8u);
  EXPECT_EQ(s.size_bytes(), 32u * 16u * 8u);
  EXPECT_NE(value_error([] { (void)make_array_shape({8}, ArrayFormat::uint8, 3, false, "t"); }).find("num_channels"),
            std::string::npos);
  EXPECT_NE(value_error([] { (void)make_array_shape({2, 2, 2, 2}, ArrayFormat::uint8, 1, false, "t"); })
                .find("shape rank must be 1, 2 or 3"),
            std::string::npos);
  EXPECT_NE(value_error([] { (void)make_array_shape({8, -1}, ArrayFormat::uint8, 1, false, "t"); })
                .find("shape[1] must be >= 1, got -1"),
            std::string::npos);
  EXPECT_NE(value_error([] { (void)make_array_shape({1LL << 40, 1LL << 40}, ArrayFormat::float32, 4, false, "t"); })
                .find("too large"),
            std::string::npos);
}

TEST(ArrayShape, MipmapLevelsStopAtOneElement) {
  ArrayShape s = make_array_shape({16, 4}, ArrayFormat::float32, 1, false, "t");
  check_mipmap_levels(s, 5, "t");  // 16, 8, 4, 2, 1
  EXPECT_NE(value_error([&] { check_mipmap_levels(s, 6, "t"); }).find("t: num_levels 6 is more than shape"),
            std::string::npos);
  EXPECT_NE(value_error([&] { check_mipmap_levels(s, 0, "t"); }).find("num_levels must be in 1..64, got 0"),
            std::string::npos);
  check_mipmap_levels(make_array_shape({1}, ArrayFormat::uint8, 1, false, "t"), 1, "t");
}

TEST(ResourceDesc, LinearAndPitch2dSizesAreCheckedAgainstTheBuffer) {
  ResourceDesc r = ResourceDesc::from_linear(0x1000, 4096, 0, ArrayFormat::uint32, 1, std::nullopt);
  EXPECT_EQ(r.size_bytes(), 4096u);
  EXPECT_STREQ(r.kind_name(), "linear");
  CUDA_RESOURCE_DESC d = r.to_cu();
  EXPECT_EQ(d.resType, CU_RESOURCE_TYPE_LINEAR);
  EXPECT_EQ(d.res.linear.format, CU_AD_FORMAT_UNSIGNED_INT32);
  auto linear = [](long long size) {
    return value_error([=] { (void)ResourceDesc::from_linear(0x1000, 1024, 0, ArrayFormat::uint32, 1, size); });
  };
  EXPECT_NE(linear(2048).find("exceeds buffer.size"), std::string::npos);
  EXPECT_NE(linear(0).find("at least one element"), std::string::npos);
  EXPECT_NE(linear(10).find("multiple of element size"), std::string::npos);
  ResourceDesc p = ResourceDesc::from_pitch2d(0x1000, 4096, 0, ArrayFormat::uint8, 4, 8, 8, 64);
  EXPECT_EQ(p.to_cu().res.pitch2D.pitchInBytes, 64u);
  auto pitch2d = [](long long w, long long h, long long pitch) {
    return value_error([=] { (void)ResourceDesc::from_pitch2d(0x1000, 4096, 0, ArrayFormat::uint32, 1, w, h, pitch); });
  };
  EXPECT_NE(pitch2d(16, 8, 32).find("pitch_bytes 32 is less than a row"), std::string::npos);
  EXPECT_NE(pitch2d(16, 128, 64).find("exceeds buffer.size"), std::string::npos);
  EXPECT_NE(pitch2d(0, 8, 64).find("width must be >= 1"), std::string::npos);
  EXPECT_NE(pitch2d(8, 0, 64).find("height must be >= 1"), std::string::npos);
  EXPECT_NE(pitch2d(8, 1LL << 62, 64).find("exceeds buffer.size"), std::string::npos);  // no overflow
}

TEST(TextureOptions, NamesResolveOrNameTheRule) {
  EXPECT_EQ(address_mode_from_name("mirror", "t", "address_mode[0]"), AddressMode::mirror);
  EXPECT_EQ(filter_mode_from_name("linear", "t", "filter_mode"), FilterMode::linear);
  EXPECT_TRUE(read_mode_is_normalized_float("normalized_float", "t"));
  EXPECT_NE(value_error([] { (void)address_mode_from_name("bad", "t", "address_mode[1]"); }).find("address_mode[1]"),
            std::string::npos);
  EXPECT_NE(value_error([] { (void)read_mode_is_normalized_float("x", "t"); }).find("ReadModeType"),
            std::string::npos);
}

TEST(Checkpoint, UuidTextAndPid) {
  checkpoint::Uuid a = checkpoint::parse_uuid("GPU-8ad4f6e1-5cd0-11ee-8c99-f0f1c1ab14aa");
  EXPECT_EQ(a, checkpoint::parse_uuid("8ad4f6e15cd011ee8c99f0f1c1ab14aa"));
  EXPECT_EQ(a[0], 0x8a);
  EXPECT_EQ(a[15], 0xaa);
  EXPECT_NE(value_error([] { (void)checkpoint::parse_uuid("8ad4f6e1-zz"); }).find("32 hex characters"),
            std::string::npos);
  EXPECT_NE(value_error([] { (void)checkpoint::state(0); }).find("pid must be a positive int"), std::string::npos);
  EXPECT_STREQ(checkpoint::state_name(checkpoint::ProcessState::checkpointed), "checkpointed");
}

TEST(DeviceAttributes, FlagsAreMarked) {
  std::size_t n = 0;
  const DeviceAttributeInfo* attrs = device_attributes(&n);
  int flags = 0;
  for (std::size_t i = 0; i < n; ++i) {
    flags += attrs[i].is_flag;
    const std::string name = attrs[i].name;
    if (name == "concurrent_kernels" || name == "gpu_overlap") {
      EXPECT_TRUE(attrs[i].is_flag) << name;
    }
    if (name == "max_threads_per_block") {
      EXPECT_FALSE(attrs[i].is_flag);
    }
  }
  EXPECT_EQ(flags, 55);
}
