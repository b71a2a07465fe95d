// Checked driver calls: the one place a CUresult becomes an exception, and where errors
// recorded by destructors are reported.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "nanocuda/driver/deferred_errors.h"
#include "nanocuda/driver/driver_api.h"
#include "nanocuda/driver/error.h"

namespace nanocuda::detail {

// Builds and throws the Error; kept out of line so the success path stays small.
[[noreturn]] void throw_error(CUresult code, const char* call, const std::string& object);

// Checks `code`; `describe` builds the object's description only on failure (it is a
// callable returning std::string, or a string). Also rethrows any error a destructor
// recorded since the last checked call, so such errors are never lost.
template <class Describe>
inline void check(CUresult code, const char* call, Describe&& describe) {
  if (code != CUDA_SUCCESS) [[unlikely]] {
    if constexpr (std::is_invocable_v<Describe>)
      throw_error(code, call, std::forward<Describe>(describe)());
    else
      throw_error(code, call, std::string(describe));
  }
  if (has_deferred_errors()) [[unlikely]]
    rethrow_deferred_error();
}

inline void check(CUresult code, const char* call) { check(code, call, ""); }

}  // namespace nanocuda::detail

// Calls driver entry point `name` through the table and checks it:
//   NANOCUDA_CALL(cuStreamSynchronize, [&] { return describe(); }, handle);
#define NANOCUDA_CALL(name, describe, ...) \
  ::nanocuda::detail::check(::nanocuda::detail::driver().name(__VA_ARGS__), #name, describe)
