// ProgramOptions helpers: code-type names, architecture spelling, and cuda.core's option names.
#include "nanocuda/compile/program_options.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "nanocuda/core/device.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

using detail::OptionKind;
using detail::OptionSpec;

// cuda.core 1.2's ProgramOptions names with the NVRTC flag each stands for. The names that
// are typed ProgramOptions fields (arch, std, debug, ...) are handled by set() itself.
constexpr std::array kNvrtcOptions = {
    OptionSpec{"extensible_whole_program", OptionKind::flag, "--extensible-whole-program"},
    // NVRTC takes only --dopt=on; False leaves its default (off unless -G).
    OptionSpec{"device_code_optimize", OptionKind::flag, "--dopt=on"},
    OptionSpec{"ptxas_options", OptionKind::text_list, "--ptxas-options"},
    OptionSpec{"ftz", OptionKind::true_false, "--ftz"},
    OptionSpec{"prec_sqrt", OptionKind::true_false, "--prec-sqrt"},
    OptionSpec{"prec_div", OptionKind::true_false, "--prec-div"},
    OptionSpec{"fma", OptionKind::true_false, "--fmad"},
    OptionSpec{"extra_device_vectorization", OptionKind::flag, "--extra-device-vectorization"},
    OptionSpec{"link_time_optimization", OptionKind::flag, "-dlto"},
    OptionSpec{"gen_opt_lto", OptionKind::flag, "--gen-opt-lto"},
    OptionSpec{"undefine_macro", OptionKind::prefix_list, "-U"},
    // nanocuda always puts the CUDA headers it found (toolkit or pip) on the include path.
    OptionSpec{"use_bundled_headers", OptionKind::none, ""},
    OptionSpec{"pre_include", OptionKind::text_list, "--pre-include"},
    OptionSpec{"no_source_include", OptionKind::flag, "--no-source-include"},
    OptionSpec{"builtin_move_forward", OptionKind::true_false, "--builtin-move-forward"},
    OptionSpec{"builtin_initializer_list", OptionKind::true_false, "--builtin-initializer-list"},
    OptionSpec{"disable_warnings", OptionKind::flag, "--disable-warnings"},
    OptionSpec{"restrict", OptionKind::flag, "--restrict"},
    OptionSpec{"device_int128", OptionKind::flag, "--device-int128"},
    OptionSpec{"optimization_info", OptionKind::text, "--optimization-info"},
    OptionSpec{"no_display_error_number", OptionKind::flag, "--no-display-error-number"},
    OptionSpec{"diag_error", OptionKind::joined, "--diag-error"},
    OptionSpec{"diag_suppress", OptionKind::joined, "--diag-suppress"},
    OptionSpec{"diag_warn", OptionKind::joined, "--diag-warn"},
    OptionSpec{"brief_diagnostics", OptionKind::true_false, "--brief-diagnostics"},
    OptionSpec{"time", OptionKind::path, "--time"},
    OptionSpec{"split_compile", OptionKind::integer, "--split-compile"},
    OptionSpec{"fdevice_syntax_only", OptionKind::flag, "--fdevice-syntax-only"},
    OptionSpec{"minimal", OptionKind::flag, "--minimal"},
    OptionSpec{"no_cache", OptionKind::flag, "--no-cache"},
    OptionSpec{"fdevice_time_trace", OptionKind::path, "--fdevice-time-trace"},
    OptionSpec{"device_float128", OptionKind::flag, "--device-float128"},
    OptionSpec{"frandom_seed", OptionKind::text, "--frandom-seed"},
    OptionSpec{"ofast_compile", OptionKind::text, "--Ofast-compile"},
    OptionSpec{"pch", OptionKind::flag, "--pch"},
    OptionSpec{"create_pch", OptionKind::path, "--create-pch"},
    OptionSpec{"use_pch", OptionKind::path, "--use-pch"},
    OptionSpec{"pch_dir", OptionKind::path, "--pch-dir"},
    OptionSpec{"pch_verbose", OptionKind::true_false, "--pch-verbose"},
    OptionSpec{"pch_messages", OptionKind::true_false, "--pch-messages"},
    OptionSpec{"instantiate_templates_in_pch", OptionKind::true_false, "--instantiate-templates-in-pch"},
    // NVVM-only (libNVVM reads them itself; NVRTC gets no flag).
    OptionSpec{"extra_sources", OptionKind::none, ""},
    OptionSpec{"use_libdevice", OptionKind::none, ""},
    OptionSpec{"numba_debug", OptionKind::flag, "--numba-debug"},
};

// cuda.core names of the typed fields, in cuda.core's order.
constexpr std::array kFieldOptions = {
    "name", "arch", "relocatable_device_code", "debug", "lineinfo", "max_register_count",
    "use_fast_math", "define_macro", "include_path", "std", "device_as_default_execution_space",
};

// nanocuda's own names of the same fields (the C++ member names), also taken by set().
constexpr std::array kOwnFieldOptions = {
    "defines", "include_dirs", "fast_math", "max_registers", "default_device", "extra_flags",
};

constexpr const char* kOwner = "ProgramOptions";
constexpr int kMaxRegisters = 255;  // registers per thread on every architecture NVRTC targets

int as_int(const std::string& option, const OptionValue& value) {
  if (const long long* n = std::get_if<long long>(&value)) {
    if (*n < 0 || *n > kMaxRegisters)
      throw ValueError(std::string(kOwner) + ": option '" + option + "' = " + std::to_string(*n) +
                       " is out of range: 0 (the compiler's choice) to " + std::to_string(kMaxRegisters));
    return static_cast<int>(*n);
  }
  throw TypeError(std::string(kOwner) + ": option '" + option + "' takes an int");
}

std::string as_text(const std::string& option, const OptionValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  throw TypeError(std::string(kOwner) + ": option '" + option + "' takes a str");
}

}  // namespace

const char* code_type_name(CodeType type) noexcept {
  switch (type) {
    case CodeType::cubin: return "cubin";
    case CodeType::ptx: return "ptx";
    case CodeType::ltoir: return "ltoir";
    case CodeType::fatbin: return "fatbin";
    case CodeType::object: return "object";
    case CodeType::library: return "library";
  }
  return "unknown";
}

CodeType parse_code_type(const std::string& name) {
  for (CodeType t : {CodeType::cubin, CodeType::ptx, CodeType::ltoir, CodeType::fatbin,
                     CodeType::object, CodeType::library})
    if (name == code_type_name(t)) return t;
  throw ValueError("unknown code type '" + name +
                   "': expected 'cubin', 'ptx', 'ltoir', 'fatbin', 'object' or 'library'");
}

const char* source_type_name(SourceType type) noexcept {
  switch (type) {
    case SourceType::cxx: return "c++";
    case SourceType::ptx: return "ptx";
    case SourceType::nvvm: return "nvvm";
  }
  return "unknown";
}

SourceType parse_source_type(const std::string& name) {
  for (SourceType t : {SourceType::cxx, SourceType::ptx, SourceType::nvvm})
    if (name == source_type_name(t)) return t;
  throw ValueError("Program: unknown code_type '" + name + "': expected 'c++', 'ptx' or 'nvvm'");
}

std::vector<std::string> ProgramOptions::option_names() {
  std::vector<std::string> names(kFieldOptions.begin(), kFieldOptions.end());
  for (const auto& spec : kNvrtcOptions) names.emplace_back(spec.name);
  return names;
}

namespace {

// What an unknown name is compared with: nanocuda's field names, then cuda.core's.
std::vector<std::string> settable_names() {
  std::vector<std::string> names(kOwnFieldOptions.begin(), kOwnFieldOptions.end());
  names.insert(names.begin(), {"arch", "std"});
  for (std::string& n : ProgramOptions::option_names())
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(std::move(n));
  return names;
}

}  // namespace

ProgramOptions& ProgramOptions::set(const std::string& option, OptionValue value) {
  auto words = [&] { return detail::as_words(kOwner, option.c_str(), value); };
  auto flag = [&] { return detail::as_bool(kOwner, option.c_str(), value); };
  if (option == "name") name = as_text(option, value);
  else if (option == "arch") arch = as_text(option, value);
  else if (option == "std") std = as_text(option, value);
  else if (option == "relocatable_device_code") relocatable_device_code = flag();
  else if (option == "debug") debug = flag();
  else if (option == "lineinfo") lineinfo = flag();
  else if (option == "use_fast_math" || option == "fast_math") fast_math = flag();
  else if (option == "device_as_default_execution_space" || option == "default_device") default_device = flag();
  else if (option == "max_register_count" || option == "max_registers") max_registers = as_int(option, value);
  else if (option == "define_macro" || option == "defines") defines = words();
  else if (option == "include_dirs") include_dirs = words();
  else if (option == "extra_flags") extra_flags = words();
  // cuda.core adds no flag for include_path/pre_include=False: neither does nanocuda.
  else if ((option == "include_path" || option == "pre_include") && std::get_if<bool>(&value) &&
           !std::get<bool>(value)) {
    if (option == "include_path") include_dirs.clear();
    else detail::set_named(kOwner, kNvrtcOptions, &option_names, named, option, std::vector<std::string>{});
  }
  else if (option == "include_path") include_dirs = words();
  else {
    detail::set_named(kOwner, kNvrtcOptions, &settable_names, named, option, std::move(value));
  }
  return *this;
}

void ProgramOptions::validate() const {
  if (max_registers < 0 || max_registers > kMaxRegisters)
    throw ValueError(std::string(kOwner) + ": max_registers = " + std::to_string(max_registers) +
                     " is out of range: 0 (the compiler's choice) to " + std::to_string(kMaxRegisters));
  // Flags reach the compiler as C strings: a NUL byte would silently cut one short.
  auto check = [](const char* option, const std::string& text) {
    if (text.find('\0') != std::string::npos)
      throw ValueError(std::string(kOwner) + ": option '" + option +
                       "' holds a NUL byte; compiler options are text without NUL bytes");
  };
  auto check_all = [&](const char* option, const std::vector<std::string>& texts) {
    for (const auto& t : texts) check(option, t);
  };
  check("arch", arch);
  check("std", std);
  check("name", name);
  check_all("defines", defines);
  check_all("include_dirs", include_dirs);
  check_all("extra_flags", extra_flags);
  for (const auto& n : named) {
    if (const auto* t = std::get_if<std::string>(&n.value)) check(n.name.c_str(), *t);
    if (const auto* list = std::get_if<std::vector<std::string>>(&n.value)) check_all(n.name.c_str(), *list);
  }
}

const OptionValue* ProgramOptions::get(const std::string& option) const {
  for (const auto& n : named)
    if (n.name == option) return &n.value;
  return nullptr;
}

std::vector<std::string> ProgramOptions::named_flags() const {
  std::vector<std::string> out;
  for (const auto& n : named)
    if (const OptionSpec* spec = detail::find_option(kNvrtcOptions, n.name))
      detail::append_flags(kOwner, *spec, n.value, out);
  return out;
}

std::string normalize_arch(const std::string& arch) {
  std::string s = arch;
  for (const char* prefix : {"sm_", "compute_", "lto_"})
    if (s.rfind(prefix, 0) == 0) {
      s = s.substr(std::string(prefix).size());
      break;
    }
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  std::string suffix = s.substr(digits);
  if (digits < 2 || !(suffix.empty() || suffix == "a" || suffix == "f"))
    throw ValueError("invalid arch '" + arch +
                     "': expected e.g. \"sm_90a\", \"compute_90a\", \"90a\" or \"86\"");
  return s;
}

std::string ProgramOptions::resolved_arch(bool portable) const {
  if (!arch.empty()) return normalize_arch(arch);
  if (portable) {
    std::string a = resolved_arch(false);
    while (!a.empty() && (a.back() == 'a' || a.back() == 'f')) a.pop_back();
    return a;
  }
  // Default: the GPU this process would run on. Without one there is no default (a guess
  // such as sm_75 would load on no GPU of another major version): name the option instead.
  // The call name marks this error, so the Python layer words it in Python (errors.cpp).
  try {
    return Device().target_arch();
  } catch (const DriverNotFoundError& e) {
    throw DriverNotFoundError(e.code(), "ProgramOptions::arch", "",
                              "no GPU to take the target architecture from (no NVIDIA driver); "
                              "set ProgramOptions::arch, e.g. \"sm_90a\"");
  }
}

}  // namespace nanocuda
