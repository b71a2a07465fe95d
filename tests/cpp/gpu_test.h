// Skips a GoogleTest test, printing why, when no CUDA device is usable here.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "nanocuda/core/device.h"
#include "nanocuda/driver/error.h"

namespace nanocuda::testing {

// Empty when a device is usable, else the reason there is none.
inline std::string gpu_unavailable_reason() {
  try {
    return Device::count() > 0 ? "" : "the driver reports no CUDA device";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace nanocuda::testing

#define NANOCUDA_REQUIRE_GPU()                                                   \
  do {                                                                           \
    static const std::string reason = ::nanocuda::testing::gpu_unavailable_reason(); \
    if (!reason.empty()) GTEST_SKIP() << "needs a GPU: " << reason;              \
  } while (0)
