// The public driver-loader and deferred-error answers, over the detail:: functions.
#include "nanocuda/driver/driver_info.h"

#include "nanocuda/driver/deferred_errors.h"
#include "nanocuda/driver/driver_api.h"

namespace nanocuda {

std::string driver_library() {
  detail::load_driver();
  return detail::driver_library_path();
}

bool has_deferred_errors() noexcept { return detail::has_deferred_errors(); }

void check_deferred_errors() {
  if (detail::has_deferred_errors()) detail::rethrow_deferred_error();
}

std::vector<std::string> take_deferred_errors() { return detail::take_deferred_errors(); }

}  // namespace nanocuda
