// The NVML loader where there is no NVML: a clear NvmlError naming the library, remembered.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "nanocuda/nvml/nvml_device.h"
#include "nanocuda/nvml/nvml_error.h"

// ctest runs each test in its own process, so the loader starts fresh here.
TEST(NvmlLoader, MissingLibraryGivesLibraryNotFound) {
  setenv("NANOCUDA_LIBNVML", "/nonexistent/libnvidia-ml.so.1", 1);
  EXPECT_EQ(nanocuda::nvml::state(), 0);
  try {
    (void)nanocuda::nvml::device_count();
    FAIL() << "expected NvmlError";
  } catch (const nanocuda::NvmlError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), nanocuda::nvml::kErrorLibraryNotFound);
    EXPECT_STREQ(e.name(), "NVML_ERROR_LIBRARY_NOT_FOUND");
    EXPECT_NE(what.find("requires NVML support"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << what;
  }
  EXPECT_EQ(nanocuda::nvml::state(), 2);
  // Remembered: the next query fails the same way without another dlopen.
  EXPECT_THROW((void)nanocuda::nvml::NvmlDevice::by_index(0), nanocuda::NvmlError);
  nanocuda::nvml::reset_for_testing();
  EXPECT_EQ(nanocuda::nvml::state(), 0);
  unsetenv("NANOCUDA_LIBNVML");
}

TEST(NvmlLoader, ErrorTextNamesCallObjectAndCode) {
  nanocuda::NvmlError e(nanocuda::nvml::kErrorNotSupported, "nvmlDeviceGetSerial", "NVML device 1");
  EXPECT_EQ(std::string(e.what()).rfind("nvmlDeviceGetSerial(NVML device 1) failed: NVML_ERROR_NOT_SUPPORTED", 0), 0u)
      << e.what();
  EXPECT_STREQ(nanocuda::nvml::return_name(10), "NVML_ERROR_TIMEOUT");
  EXPECT_STREQ(nanocuda::nvml::return_name(12345), "NVML_ERROR_UNKNOWN");
}
