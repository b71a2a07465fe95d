// Public C++ for the driver loader's answers and the deferred-error record (Python has the same).
#pragma once

#include <string>
#include <vector>

namespace nanocuda {

// The path of the libcuda nanocuda loaded ($NANOCUDA_LIBCUDA, else the system's
// libcuda.so.1); loads the driver first (DriverNotFoundError without one). Python:
// nanocuda.driver_library().
[[nodiscard]] std::string driver_library();

// True when a destructor or a host callback recorded a failure that is not reported yet.
[[nodiscard]] bool has_deferred_errors() noexcept;
// Throws the oldest recorded failure as nanocuda::Error (and forgets it); returns when none.
void check_deferred_errors();
// Every recorded failure's message, oldest first, and clears the record (Python:
// nanocuda.take_deferred_errors()).
[[nodiscard]] std::vector<std::string> take_deferred_errors();

}  // namespace nanocuda
