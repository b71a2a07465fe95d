// Links several objects (PTX, LTO-IR, cubin, fatbin, device objects and libraries) into one cubin or PTX with nvJitLink.
#pragma once

#include <string>
#include <vector>

#include "nanocuda/compile/named_options.h"
#include "nanocuda/compile/object_code.h"

namespace nanocuda {

struct LinkerOptions {
  // Target ("sm_90a", "90a", ...); empty = the default Device()'s (the current device).
  std::string arch;
  bool debug = false;     // -g
  bool lineinfo = false;  // -lineinfo
  // Link-time optimisation; turned on automatically when any input is LTO-IR.
  bool lto = false;
  std::vector<std::string> extra_flags;
  // The linked ObjectCode's name (cuda.core's `name`).
  std::string name;
  // Further options by cuda.core's LinkerOptions names (max_register_count, ftz, ...).
  std::vector<NamedOption> named;

  // Sets an option by its cuda.core LinkerOptions name (link_time_optimization sets `lto`).
  // Unknown names and values of the wrong kind throw TypeError.
  LinkerOptions& set(const std::string& option, OptionValue value);
  // Every name set() takes, cuda.core's order.
  [[nodiscard]] static std::vector<std::string> option_names();
  // The nvJitLink flags for linking to `target` (cubin or ptx); resolves the arch.
  [[nodiscard]] std::vector<std::string> flags(CodeType target, bool has_ltoir = false) const;
};

class Linker {
 public:
  explicit Linker(LinkerOptions options = {}) : options_(std::move(options)) {}
  // Queues an input; returns *this for chaining.
  Linker& add(const ObjectCode& object);
  // Runs nvJitLink and returns the linked cubin or PTX (lowered names of the inputs are
  // kept). Throws CompileError with nvJitLink's log on failure. The logs stay readable.
  [[nodiscard]] ObjectCode link(CodeType target = CodeType::cubin);
  // nvJitLink's error and info logs of the last link(); empty before one.
  [[nodiscard]] const std::string& error_log() const noexcept { return error_log_; }
  [[nodiscard]] const std::string& info_log() const noexcept { return info_log_; }
  [[nodiscard]] const LinkerOptions& options() const noexcept { return options_; }
  [[nodiscard]] const std::vector<ObjectCode>& inputs() const noexcept { return inputs_; }

 private:
  LinkerOptions options_;
  std::vector<ObjectCode> inputs_;
  std::string error_log_;
  std::string info_log_;
};

// Links `objects` in one call.
[[nodiscard]] ObjectCode link(const std::vector<ObjectCode>& objects, LinkerOptions options = {},
                              CodeType target = CodeType::cubin);

}  // namespace nanocuda
