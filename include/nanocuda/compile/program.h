// A program compiled at run time: CUDA C++ with NVRTC (cached), PTX with nvJitLink, NVVM IR with libNVVM.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nanocuda/compile/object_code.h"
#include "nanocuda/compile/program_options.h"

namespace nanocuda {

class Program {
 public:
  // `name` is used in messages and logs ("kernel.cu(3): error ..."); when it is a path,
  // its folder is searched for quoted #includes. Empty: options.name, else "kernel.cu".
  explicit Program(std::string source, ProgramOptions options = {}, std::string name = {});
  // A program of PTX or NVVM IR (text or bitcode) as well as C++.
  Program(std::string source, SourceType type, ProgramOptions options = {}, std::string name = {});
  // Reads `path`; the program is named after it.
  static Program from_file(const std::string& path, ProgramOptions options = {});

  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const ProgramOptions& options() const noexcept { return options_; }
  [[nodiscard]] SourceType source_type() const noexcept { return type_; }
  // The library that compiles it: "NVRTC", "nvJitLink" or "NVVM".
  [[nodiscard]] const char* backend() const noexcept;

  // Compiles to `target`: C++ to cubin, ptx or ltoir; PTX to cubin (nvJitLink); NVVM IR to
  // ptx, cubin (through nvJitLink) or ltoir. `name_expressions` ("gemm<128, 64>", C++ only)
  // are instantiated and their lowered names kept in the result, so get_kernel() takes
  // them. C++ is served from the cache when the same source, options, local headers, NVRTC
  // and target were compiled before. Throws CompileError on a compile error; a target the
  // source type cannot produce throws ValueError naming the ones it can.
  [[nodiscard]] ObjectCode compile(CodeType target = CodeType::cubin,
                                   const std::vector<std::string>& name_expressions = {}) const;

  // The compile cache's key for compile(target, name_expressions): everything that decides
  // the output (NVRTC, flags, source, local headers by content). C++ sources only: PTX and
  // NVVM compiles are not cached, so asking for their key is a ValueError.
  [[nodiscard]] std::string cache_key(CodeType target, const std::vector<std::string>& name_expressions = {}) const;

  // The exact flags compile(target) gives the compiler (NVRTC, nvJitLink or libNVVM; arch
  // resolved, toolkit paths added).
  [[nodiscard]] std::vector<std::string> flags(CodeType target) const;
  // The NVRTC library in use and its version (major*1000 + minor*10); loads NVRTC.
  [[nodiscard]] static std::string nvrtc_path();
  [[nodiscard]] static int nvrtc_version();

 private:
  std::string source_;
  ProgramOptions options_;
  std::string name_;
  std::string source_dir_;
  SourceType type_ = SourceType::cxx;

  [[nodiscard]] std::string cache_key_for(CodeType target, const std::vector<std::string>& flags,
                                          const std::vector<std::string>& name_expressions) const;
  [[nodiscard]] ObjectCode compile_cxx(CodeType target, const std::vector<std::string>& exprs) const;
  [[nodiscard]] ObjectCode compile_nvvm(CodeType target) const;
  [[nodiscard]] std::vector<std::string> nvvm_flags(CodeType target) const;
};

// The flags `options` compiles with on `backend`, a compiler library by cuda.core's name
// ("nvrtc", "nvjitlink", "nvvm"; or NVRTC, nvJitLink, NVVM) for `target` (default: cubin,
// PTX for NVVM). Throws ValueError naming the backends for any other.
[[nodiscard]] std::vector<std::string> backend_flags(const ProgramOptions& options, std::string_view backend,
                                                     std::optional<CodeType> target = {});

}  // namespace nanocuda
