// The error text: names, descriptions and the call/object in what().
#include <gtest/gtest.h>

#include <string>

#include "nanocuda/driver/check.h"
#include "nanocuda/driver/error.h"

using nanocuda::Error;

TEST(Error, CarriesCodeNameCallAndObject) {
  Error e(CUDA_ERROR_INVALID_VALUE, "cuMemAllocAsync", "Buffer(16 bytes) on device 0");
  EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
  EXPECT_STREQ(e.name(), "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(e.call(), "cuMemAllocAsync");
  EXPECT_EQ(e.object(), "Buffer(16 bytes) on device 0");
  std::string what = e.what();
  EXPECT_NE(what.find("cuMemAllocAsync(Buffer(16 bytes) on device 0) failed"), std::string::npos);
  EXPECT_NE(what.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos);
  EXPECT_NE(what.find("not within an acceptable range"), std::string::npos) << what;
}

TEST(Error, NamesKnownWithoutDriver) {
  EXPECT_EQ(nanocuda::result_name(CUDA_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(nanocuda::result_name(CUDA_ERROR_ILLEGAL_ADDRESS), "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(nanocuda::result_name(CUDA_SUCCESS), "CUDA_SUCCESS");
  EXPECT_EQ(nanocuda::result_name(static_cast<CUresult>(12345)), "CUDA_ERROR_UNKNOWN_CODE_12345");
  EXPECT_NE(nanocuda::result_description(CUDA_ERROR_NO_DEVICE).find("no CUDA-capable"),
            std::string::npos);
}

TEST(Error, EveryCodeInHeaderHasAName) {
  for (CUresult code : {CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_NOT_FOUND,
                        CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_UNKNOWN})
    EXPECT_EQ(nanocuda::result_name(code).rfind("CUDA_ERROR_", 0), 0u) << code;
}

TEST(Error, CheckThrowsOnlyOnFailureAndBuildsTextLazily) {
  int described = 0;
  auto describe = [&] {
    ++described;
    return std::string("Stream 0x1");
  };
  EXPECT_NO_THROW(nanocuda::detail::check(CUDA_SUCCESS, "cuStreamQuery", describe));
  EXPECT_EQ(described, 0);
  try {
    nanocuda::detail::check(CUDA_ERROR_INVALID_HANDLE, "cuStreamQuery", describe);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(e.object(), "Stream 0x1");
  }
  EXPECT_EQ(described, 1);
}

TEST(Error, DeferredErrorIsReportedByNextCheckedCall) {
  nanocuda::detail::record_deferred_error(CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamDestroy", "Stream");
  EXPECT_TRUE(nanocuda::detail::has_deferred_errors());
  try {
    nanocuda::detail::check(CUDA_SUCCESS, "cuStreamQuery");
    FAIL() << "deferred error was lost";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(e.call(), "cuStreamDestroy");
    EXPECT_NE(std::string(e.what()).find("in destructor of Stream"), std::string::npos);
  }
  EXPECT_FALSE(nanocuda::detail::has_deferred_errors());
  EXPECT_NO_THROW(nanocuda::detail::check(CUDA_SUCCESS, "cuStreamQuery"));
}

TEST(Error, DeferredErrorsCanBeTakenForWarnings) {
  nanocuda::detail::record_deferred_error(CUDA_ERROR_INVALID_VALUE, "cuMemFreeAsync", "Buffer");
  nanocuda::detail::record_deferred_error(CUDA_ERROR_INVALID_HANDLE, "cuEventDestroy", "Event");
  auto messages = nanocuda::detail::take_deferred_errors();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_NE(messages[0].find("cuMemFreeAsync"), std::string::npos);
  EXPECT_NE(messages[1].find("cuEventDestroy"), std::string::npos);
  EXPECT_FALSE(nanocuda::detail::has_deferred_errors());
}
