// A CUDA C++ program compiled at run time with NVRTC, through the compiled-code cache.
#pragma once

#include <string>
#include <vector>

#include "nanocuda/compile/object_code.h"
#include "nanocuda/compile/program_options.h"

namespace nanocuda {

class Program {
 public:
  // `name` is used in messages and logs ("kernel.cu(3): error ..."); when it is a path,
  // its folder is searched for quoted #includes.
  explicit Program(std::string source, ProgramOptions options = {}, std::string name = "kernel.cu");
  // Reads `path`; the program is named after it.
  static Program from_file(const std::string& path, ProgramOptions options = {});

  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const ProgramOptions& options() const noexcept { return options_; }

  // Compiles to `target` (cubin, ptx or ltoir). `name_expressions` ("gemm<128, 64>") are
  // instantiated and their lowered names kept in the result, so get_kernel() takes them.
  // Served from the cache when the same source, options, local headers, NVRTC and
  // target were compiled before. Throws CompileError on a compile error.
  [[nodiscard]] ObjectCode compile(CodeType target = CodeType::cubin,
                                   const std::vector<std::string>& name_expressions = {}) const;

  // The exact NVRTC flags compile(target) uses (arch resolved, toolkit paths added).
  [[nodiscard]] std::vector<std::string> flags(CodeType target) const;
  // The NVRTC library in use and its version (major*1000 + minor*10); loads NVRTC.
  [[nodiscard]] static std::string nvrtc_path();
  [[nodiscard]] static int nvrtc_version();

 private:
  std::string source_;
  ProgramOptions options_;
  std::string name_;
  std::string source_dir_;
};

}  // namespace nanocuda
