// The device-attribute table generated from cuda.h.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "nanocuda/core/device.h"

TEST(DeviceAttributes, TableIsCompleteAndUnique) {
  std::size_t n = 0;
  const nanocuda::DeviceAttributeInfo* attrs = nanocuda::device_attributes(&n);
  EXPECT_GT(n, 120u);  // cuda.h 13.0 has ~140 non-deprecated attributes
  std::set<int> values;
  std::set<std::string> names;
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_TRUE(values.insert(attrs[i].attribute).second) << attrs[i].name;
    EXPECT_TRUE(names.insert(attrs[i].name).second) << attrs[i].name;
    EXPECT_GT(std::string(attrs[i].name).size(), 2u);
  }
  EXPECT_TRUE(names.count("multiprocessor_count"));
  EXPECT_TRUE(names.count("compute_capability_major"));
  EXPECT_TRUE(names.count("max_shared_memory_per_block_optin"));
  EXPECT_FALSE(names.count("max"));
}

TEST(DeviceAttributes, AccessorsMatchTheEnum) {
  std::size_t n = 0;
  const nanocuda::DeviceAttributeInfo* attrs = nanocuda::device_attributes(&n);
  for (std::size_t i = 0; i < n; ++i) {
    if (std::string(attrs[i].name) == "max_threads_per_block") {
      EXPECT_EQ(attrs[i].attribute, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    }
    if (std::string(attrs[i].name) == "warp_size") {
      EXPECT_EQ(attrs[i].attribute, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    }
  }
}
