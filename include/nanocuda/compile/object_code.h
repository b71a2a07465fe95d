// Compiled device code (cubin, fatbin, PTX, LTO-IR, device objects and libraries) and the kernels in it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nanocuda/compile/kernel.h"
#include "nanocuda/compile/program_options.h"

namespace nanocuda {

class Library;

// Immutable bytes plus their type; cheap to copy (copies share the bytes and the loaded
// Library). Loading happens on the first get_kernel()/library() and needs a driver.
class ObjectCode {
 public:
  // `bytes` is the image as produced by nvcc/NVRTC; PTX may or may not end in NUL.
  static ObjectCode from_bytes(CodeType type, std::string bytes, std::string name = {});
  // Reads the file now; `name` defaults to the path, which path() keeps.
  static ObjectCode from_file(CodeType type, const std::string& path, std::string name = {});
  static ObjectCode from_cubin(std::string bytes) { return from_bytes(CodeType::cubin, std::move(bytes)); }
  static ObjectCode from_fatbin(std::string bytes) { return from_bytes(CodeType::fatbin, std::move(bytes)); }
  static ObjectCode from_ptx(std::string text) { return from_bytes(CodeType::ptx, std::move(text)); }
  static ObjectCode from_ltoir(std::string bytes) { return from_bytes(CodeType::ltoir, std::move(bytes)); }

  [[nodiscard]] CodeType type() const noexcept;
  [[nodiscard]] const std::string& bytes() const noexcept;
  // Where it came from (the program name or file path); for messages.
  [[nodiscard]] const std::string& name() const noexcept;
  // The file it was read from (from_file); empty for code made from bytes.
  [[nodiscard]] const std::string& path() const noexcept;
  // Name expression -> lowered (mangled) name, for templates compiled with name
  // expressions: get_kernel("gemm<128, 64>") looks the expression up here first.
  [[nodiscard]] const std::map<std::string, std::string>& lowered_names() const noexcept;
  // The arch an LTO-IR image is linked for on load ("90a"); empty = the default Device()'s (the current device).
  [[nodiscard]] const std::string& arch() const noexcept;
  // The compiler's log (warnings) from the compile that made this code; often empty.
  [[nodiscard]] const std::string& log() const noexcept;
  // The NVRTC version that produced this code (12090); 0 for code given as bytes or a file.
  // Loading checks it against the driver (a newer NVRTC's code raises DriverTooOldError).
  [[nodiscard]] int compiler_version() const noexcept;

  // A copy with these lowered names / this arch attached.
  [[nodiscard]] ObjectCode with_lowered_names(std::map<std::string, std::string> names) const;
  [[nodiscard]] ObjectCode with_arch(std::string arch) const;
  [[nodiscard]] ObjectCode with_log(std::string log) const;
  [[nodiscard]] ObjectCode with_compiler_version(int version) const;

  // The loaded library (cuLibraryLoadData; LTO-IR, device objects and libraries are first
  // linked to cubin with nvJitLink), loaded once and shared by every copy of this ObjectCode.
  [[nodiscard]] std::shared_ptr<Library> library() const;
  // The CUlibrary once library() has loaded it, else null; never loads (for repr and hashing).
  [[nodiscard]] CUlibrary loaded_handle() const noexcept;
  // The kernel `name`: a name expression given at compile time, an extern "C" name or a
  // mangled name. A missing name raises ValueError listing the kernels present.
  [[nodiscard]] Kernel get_kernel(const std::string& name) const;
  // Every kernel in the code. A cubin is read from its ELF symbol table (no driver, so
  // build machines without a GPU can list it); other types are loaded (needs a driver).
  [[nodiscard]] std::vector<std::string> kernel_names() const;

 private:
  struct State;
  explicit ObjectCode(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace nanocuda
