// Errors raised where nothing may throw (destructors): recorded here, reported later.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include <cuda.h>

namespace nanocuda::detail {

extern std::atomic<bool> g_has_deferred_errors;

// Records a failure seen in a destructor; never throws (drops the text on allocation
// failure, but keeps the flag so the next check still reports that something failed).
void record_deferred_error(CUresult code, const char* call, const char* object) noexcept;

// Records a failure that happened where nothing can be raised (a host callback running on
// a driver thread); `description` is the whole object text, reported as given.
void record_deferred_failure(CUresult code, const char* call, std::string description) noexcept;

inline bool has_deferred_errors() noexcept {
  return g_has_deferred_errors.load(std::memory_order_relaxed);
}

// Throws the oldest recorded error (as nanocuda::Error) and forgets it.
[[noreturn]] void rethrow_deferred_error();

// Takes every recorded error's message and clears the record (for warnings at exit).
std::vector<std::string> take_deferred_errors();

}  // namespace nanocuda::detail
