// Launch-configuration validation, which needs no device.
#include <gtest/gtest.h>

#include <string>

#include "nanocuda/driver/error.h"
#include "nanocuda/launch/launch_config.h"

using nanocuda::LaunchConfig;

namespace {

std::string rejection(const LaunchConfig& c) {
  try {
    c.validate();
  } catch (const nanocuda::ValueError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(LaunchConfig, AcceptsOrdinaryShapes) {
  LaunchConfig c;
  c.grid = {1024, 1, 1};
  c.block = {256, 1, 1};
  EXPECT_NO_THROW(c.validate());
  c.block = {32, 32, 1};
  EXPECT_NO_THROW(c.validate());
  c.grid = {8, 4, 1};
  c.cluster = {2, 2, 1};
  EXPECT_NO_THROW(c.validate());
  EXPECT_FALSE(c.is_simple());
  EXPECT_EQ(c.blocks(), (nanocuda::Dim3{16, 8, 1}));  // grid counts clusters (cuda.core's rule)
  c.grid = {3, 1, 1};
  c.cluster = {2, 1, 1};
  EXPECT_NO_THROW(c.validate());  // no divisibility rule: 3 clusters of 2
  EXPECT_EQ(c.blocks(), (nanocuda::Dim3{6, 1, 1}));
  c.cluster = {0, 0, 0};
  EXPECT_EQ(c.blocks(), (nanocuda::Dim3{3, 1, 1}));
}

TEST(LaunchConfig, RejectsWithRuleAndValue) {
  LaunchConfig c;
  c.block = {1025, 1, 1};
  EXPECT_NE(rejection(c).find("at most 1024 threads, this one has 1025"), std::string::npos);
  c.block = {0, 1, 1};
  EXPECT_NE(rejection(c).find("block dimension must be at least 1"), std::string::npos);
  c.block = {1, 1, 65};
  EXPECT_NE(rejection(c).find("block z is at most 64"), std::string::npos);
  c.block = {32, 1, 1};
  c.grid = {1, 70000, 1};
  EXPECT_NE(rejection(c).find("grid y and z are at most 65535"), std::string::npos);
  c.grid = {1, 40000, 1};  // 80000 blocks in y: grid counts clusters
  c.cluster = {1, 2, 1};
  EXPECT_NE(rejection(c).find("at most 65535 blocks (grid × cluster), got (1, 80000, 1)"), std::string::npos);
  c.grid = {64, 1, 1};
  c.cluster = {32, 1, 1};
  EXPECT_NE(rejection(c).find("at most 16 blocks"), std::string::npos);
}

TEST(LaunchConfig, DescribeNamesEverySetting) {
  LaunchConfig c;
  c.grid = {2, 1, 1};
  c.block = {64, 1, 1};
  c.shared_mem = 100000;
  c.cooperative = true;
  EXPECT_EQ(c.describe(), "(grid=(2, 1, 1), block=(64, 1, 1), shared_mem=100000, cooperative)");
}
