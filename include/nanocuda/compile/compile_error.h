// Errors of runtime compilation and linking: a failed NVRTC/nvJitLink run, or no toolkit.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace nanocuda {

// NVRTC or nvJitLink rejected the code. what() is the first error line followed by the
// full log, so an uncaught error still shows everything.
class CompileError : public std::runtime_error {
 public:
  CompileError(std::string log, std::vector<std::string> options, std::string source_name,
               bool from_linker = false);

  // Raised by nvJitLink (Linker) rather than NVRTC/libNVVM: Python also makes it the
  // nvJitLinkError of cuda.bindings where the program imported that (cuda.core raises it).
  [[nodiscard]] bool from_linker() const noexcept { return from_linker_; }

  // The complete NVRTC (or nvJitLink) log.
  [[nodiscard]] const std::string& log() const noexcept { return log_; }
  // The flags the compiler was given, in order.
  [[nodiscard]] const std::vector<std::string>& options() const noexcept { return options_; }
  // The first line of the log containing "error" (or the first line), e.g.
  // "kernel.cu(3): error: expected a \";\"".
  [[nodiscard]] const std::string& first_error() const noexcept { return first_error_; }

  // The first error line of `log`, as first_error() picks it.
  [[nodiscard]] static std::string find_first_error(const std::string& log);

 private:
  std::string log_;
  std::vector<std::string> options_;
  std::string first_error_;
  bool from_linker_ = false;
};

// NVRTC or nvJitLink could not be found or loaded. what() names every place looked.
class ToolkitNotFoundError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nanocuda
