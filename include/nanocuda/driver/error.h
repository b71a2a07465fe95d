// nanocuda's error types: what failed (the CUresult, its name and description), in which
// call, on which object.
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace nanocuda {

// A failed driver call. what() reads like
//   "cuStreamSynchronize(Stream 0x55d0c0 on device 0) failed: CUDA_ERROR_ILLEGAL_ADDRESS:
//    an illegal memory access was encountered"
class Error : public std::runtime_error {
 public:
  Error(CUresult code, std::string call, std::string object, std::string detail = {});

  [[nodiscard]] CUresult code() const noexcept { return code_; }
  // "CUDA_ERROR_INVALID_VALUE"; known without a driver.
  [[nodiscard]] const char* name() const noexcept;
  // The driver's description of the code.
  [[nodiscard]] const char* description() const noexcept;
  // The API call that failed, e.g. "cuMemAllocAsync".
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  // The object involved, e.g. "Buffer(4096 bytes) on device 0"; may be empty.
  [[nodiscard]] const std::string& object() const noexcept { return object_; }
  // The explanation given instead of the code's description; empty when there was none.
  // Rethrowing with more text starts from this, so the "call: " prefix is not repeated.
  [[nodiscard]] const std::string& detail() const noexcept { return detail_; }

 private:
  CUresult code_;
  std::string call_;
  std::string object_;
  std::string detail_;
};

// No usable driver: libcuda.so.1 missing, the toolkit's stub library, or cuInit failing.
// The code is CUDA_ERROR_STUB_LIBRARY for the stub, else the failing code or
// CUDA_ERROR_NO_DEVICE when no library was found at all.
class DriverNotFoundError : public Error {
 public:
  using Error::Error;
};

// The installed driver is older than something needs: nanocuda itself (below the oldest
// supported driver, detail::kOldestDriverVersion) or one feature (conditional switch nodes,
// Blackwell TMA types, code from a newer NVRTC). what() names the feature, both CUDA
// versions and what to do; the code is CUDA_ERROR_NOT_SUPPORTED.
class DriverTooOldError : public Error {
 public:
  // `found`/`required` are CUDA versions as cuDriverGetVersion gives them (12080); `advice`
  // replaces the default "update the NVIDIA driver" remedy when given.
  DriverTooOldError(std::string feature, int found, int required, std::string advice = {});

  // What needs the newer driver, e.g. "GraphBuilder.switch (a switch conditional node)".
  [[nodiscard]] const std::string& feature() const noexcept { return call(); }
  [[nodiscard]] int driver_version() const noexcept { return found_; }
  [[nodiscard]] int required_version() const noexcept { return required_; }

 private:
  int found_;
  int required_;
};

// The name of a CUresult ("CUDA_ERROR_OUT_OF_MEMORY"), from nanocuda's own table, so it
// works with no driver; "CUDA_ERROR_UNKNOWN_CODE(<n>)" style text for codes it lacks.
[[nodiscard]] std::string result_name(CUresult code);
// The description of a CUresult, from the table generated from cuda.h.
[[nodiscard]] std::string result_description(CUresult code);

// Bad arguments caught by nanocuda before any driver call (a size mismatch, a rank out of
// range). Python sees these as ValueError / TypeError. Made with (call, text), what() reads
// "Buffer::adopt: the pointer is 0" and call() is the C++ call that refused ("Buffer::adopt");
// the Python binding shows the same error under the Python name (Buffer.from_handle).
class ValueError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;  // a whole message; call() is empty
  ValueError(std::string call, std::string_view text);

  // The C++ call that raised it, e.g. "Buffer::adopt"; empty when made from a whole message.
  [[nodiscard]] const std::string& call() const noexcept { return call_; }

 private:
  std::string call_;
};
class TypeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
  TypeError(std::string call, std::string_view text);

  [[nodiscard]] const std::string& call() const noexcept { return call_; }

 private:
  std::string call_;
};
// A call the object's current state forbids (a builder not building, already ended):
// Python sees nanocuda._errors.StateError, both a RuntimeError (cuda.core) and a ValueError.
class StateError : public ValueError {
 public:
  using ValueError::ValueError;
};

}  // namespace nanocuda
