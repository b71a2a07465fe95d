// The driver loader where there is no usable driver: a clear, catchable error, never a crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "nanocuda/driver/driver_api.h"
#include "nanocuda/core/device.h"
#include "nanocuda/driver/error.h"

namespace {

bool real_driver_present() {
  try {
    nanocuda::detail::load_driver();
    return true;
  } catch (const nanocuda::DriverNotFoundError&) {
    return false;
  }
}

}  // namespace

// Runs in its own process (ctest runs each test separately), so the loader state is fresh.
TEST(DriverLoader, MissingLibraryGivesDriverNotFound) {
  setenv("NANOCUDA_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  try {
    (void)nanocuda::Device::count();
    FAIL() << "expected DriverNotFoundError";
  } catch (const nanocuda::DriverNotFoundError& e) {
    std::string what = e.what();
    EXPECT_EQ(e.code(), CUDA_ERROR_NO_DEVICE);
    EXPECT_NE(what.find("no NVIDIA driver found"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/libcuda.so.1"), std::string::npos) << what;
  }
  // The failure is remembered: the second call fails the same way, fast.
  EXPECT_THROW((void)nanocuda::Device::count(), nanocuda::DriverNotFoundError);
  EXPECT_EQ(nanocuda::detail::loaded_driver(), nullptr);
  unsetenv("NANOCUDA_LIBCUDA");
}

TEST(DriverLoader, StubLibraryIsRecognized) {
#ifndef NANOCUDA_TOOLKIT_LIBRARY_DIR
  GTEST_SKIP() << "built without a CUDA toolkit (cuda.h from pip): no stub libcuda to try";
#else
  const std::string stub = std::string(NANOCUDA_TOOLKIT_LIBRARY_DIR) + "/stubs/libcuda.so";
  setenv("NANOCUDA_LIBCUDA", stub.c_str(), 1);
  try {
    (void)nanocuda::Device::count();
    FAIL() << "the stub library must not load as a driver";
  } catch (const nanocuda::DriverNotFoundError& e) {
    std::string what = e.what();
    if (what.find("could not load") != std::string::npos)
      GTEST_SKIP() << "no stub library at " << stub;
    EXPECT_EQ(e.code(), CUDA_ERROR_STUB_LIBRARY);
    EXPECT_NE(what.find("stub library"), std::string::npos) << what;
  }
  unsetenv("NANOCUDA_LIBCUDA");
#endif
}

TEST(DriverLoader, DefaultLoadEitherWorksOrSaysWhy) {
  if (real_driver_present()) {
    EXPECT_NE(nanocuda::detail::loaded_driver(), nullptr);
    EXPECT_GE(nanocuda::Device::driver_version(), 12000);
  } else {
    try {
      (void)nanocuda::Device(0);
      FAIL();
    } catch (const nanocuda::DriverNotFoundError& e) {
      EXPECT_NE(std::string(e.what()).find("libcuda.so.1"), std::string::npos);
    }
  }
}
