// ProgramOptions helpers: code-type names and architecture spelling.
#include "nanocuda/compile/program_options.h"

#include <cctype>

#include "nanocuda/core/device.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

const char* code_type_name(CodeType type) noexcept {
  switch (type) {
    case CodeType::cubin: return "cubin";
    case CodeType::ptx: return "ptx";
    case CodeType::ltoir: return "ltoir";
    case CodeType::fatbin: return "fatbin";
  }
  return "unknown";
}

CodeType parse_code_type(const std::string& name) {
  for (CodeType t : {CodeType::cubin, CodeType::ptx, CodeType::ltoir, CodeType::fatbin})
    if (name == code_type_name(t)) return t;
  throw ValueError("unknown code type '" + name + "': expected cubin, ptx, ltoir or fatbin");
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

std::string ProgramOptions::resolved_arch() const {
  if (!arch.empty()) return normalize_arch(arch);
  // Default: the GPU this process would run on. Needs a driver and a device; the error
  // (DriverNotFoundError) tells users without one to pass arch explicitly.
  try {
    return Device(0).arch();
  } catch (const DriverNotFoundError& e) {
    throw DriverNotFoundError(e.code(), e.call(), e.object(),
                (e.detail().empty() ? std::string(e.what()) : e.detail()) +
                    " (no GPU to take the default arch from: pass arch=\"sm_90a\" or similar)");
  }
}

}  // namespace nanocuda
