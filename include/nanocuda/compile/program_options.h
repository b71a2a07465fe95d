// What NVRTC is asked to do: target architecture, language standard, macros, paths, codegen.
#pragma once

#include <string>
#include <vector>

namespace nanocuda {

// The kinds of code nanocuda compiles to, loads or links.
enum class CodeType { cubin, ptx, ltoir, fatbin };

// "cubin", "ptx", "ltoir", "fatbin".
[[nodiscard]] const char* code_type_name(CodeType type) noexcept;
// Parses the names above; throws ValueError on anything else.
[[nodiscard]] CodeType parse_code_type(const std::string& name);

struct ProgramOptions {
  // Target GPU: "sm_90a", "90a", "compute_90a", "sm_86", "86" all work (no GPU needed).
  // Empty means the current device's (Device(0).arch()), which needs a GPU.
  std::string arch;
  // The C++ standard ("c++17", "c++20"); NVRTC's default, c++17, when empty.
  std::string std = "c++17";
  // Macros, each "NAME" or "NAME=VALUE".
  std::vector<std::string> defines;
  // Searched for #include, after the source's own folder and before the toolkit's.
  std::vector<std::string> include_dirs;
  bool fast_math = false;                 // --use_fast_math
  bool lineinfo = false;                  // -lineinfo (for profilers)
  bool debug = false;                     // -G
  int max_registers = 0;                  // --maxrregcount, 0 = compiler's choice
  bool relocatable_device_code = false;   // -rdc=true (for linking)
  // Treat functions without __host__/__device__ as __device__ (-default-device). NVRTC 13
  // rejects unannotated functions outright, including cuda.h's host API declarations, so
  // this only turns errors into working code; it is what lets `#include <cuda.h>` work.
  bool default_device = true;
  // Passed through verbatim, last.
  std::vector<std::string> extra_flags;

  // The arch number with suffix ("90a"), resolving the default from Device(0) when empty.
  [[nodiscard]] std::string resolved_arch() const;
};

// "sm_90a" / "compute_90a" / "90a" -> "90a"; throws ValueError for anything else.
[[nodiscard]] std::string normalize_arch(const std::string& arch);

}  // namespace nanocuda
