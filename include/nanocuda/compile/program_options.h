// What NVRTC is asked to do: target architecture, language standard, macros, paths, codegen.
#pragma once

#include <string>
#include <vector>

#include "nanocuda/compile/named_options.h"

namespace nanocuda {

// The kinds of code nanocuda compiles to, loads or links. `object` (a relocatable device
// object, .o) and `library` (an archive of them, .a) are linker inputs only.
enum class CodeType { cubin, ptx, ltoir, fatbin, object, library };

// "cubin", "ptx", "ltoir", "fatbin", "object", "library".
[[nodiscard]] const char* code_type_name(CodeType type) noexcept;
// Parses the names above; throws ValueError listing them on anything else.
[[nodiscard]] CodeType parse_code_type(const std::string& name);

// What a Program's source is: CUDA C++ (NVRTC), PTX (nvJitLink) or NVVM IR (libNVVM).
enum class SourceType { cxx, ptx, nvvm };
// "c++", "ptx", "nvvm".
[[nodiscard]] const char* source_type_name(SourceType type) noexcept;
// Parses the names above; throws ValueError listing them on anything else.
[[nodiscard]] SourceType parse_source_type(const std::string& name);

struct ProgramOptions {
  // Target GPU: "sm_90a", "90a", "compute_90a", "sm_86", "86" all work (no GPU needed).
  // Empty means the current device's target (Device().target_arch(): the current context's
  // device, else 0, with the "a" suffix where it has one), which needs a GPU.
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
  // The program's name in messages and in the ObjectCode (cuda.core's `name`); a name given
  // to Program itself wins. Empty means "kernel.cu".
  std::string name;
  // Further options by cuda.core's names (ftz, prec_div, diag_suppress, ...), set with set().
  std::vector<NamedOption> named;

  // Sets an option by its cuda.core ProgramOptions name. Names that are fields above under
  // another name (use_fast_math, max_register_count, define_macro, include_path,
  // device_as_default_execution_space) set those fields, as do the fields' own names
  // (defines, include_dirs, fast_math, ...). An unknown name throws TypeError with the
  // closest known names; a value of the wrong kind throws TypeError.
  ProgramOptions& set(const std::string& option, OptionValue value);
  // The value a named option was given, or nullptr (fields above are not included).
  [[nodiscard]] const OptionValue* get(const std::string& option) const;
  // Every name set() takes, cuda.core's order.
  [[nodiscard]] static std::vector<std::string> option_names();
  // Throws ValueError for a field out of range (max_registers outside 0..255) or a text
  // value holding a NUL byte; called by Program's constructor and flags(), since fields
  // may be assigned directly.
  void validate() const;
  // The NVRTC flags of the named options (see flags() in program.h for all of them).
  [[nodiscard]] std::vector<std::string> named_flags() const;

  // The arch number with suffix ("90a"), resolving the default from Device() when empty.
  // `portable` (PTX, LTO-IR and NVVM output): the device default drops its "a"/"f" suffix,
  // as cuda.core's does, so the code links and JITs for the plain arch too ("sm_90" inputs
  // of a Linker); an arch that was set is kept as given.
  [[nodiscard]] std::string resolved_arch(bool portable = false) const;
};

// "sm_90a" / "compute_90a" / "90a" -> "90a"; throws ValueError for anything else.
[[nodiscard]] std::string normalize_arch(const std::string& arch);

}  // namespace nanocuda
