// Links several objects (PTX, LTO-IR, cubin, fatbin, device objects and libraries) into one cubin or PTX with nvJitLink.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "nanocuda/compile/named_options.h"
#include "nanocuda/compile/nvrtc_decls.h"
#include "nanocuda/compile/object_code.h"
#include "nanocuda/driver/unique_handle.h"

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

  // Sets an option by its cuda.core LinkerOptions name (link_time_optimization sets `lto`)
  // or a field's own name (lto, extra_flags).
  // Unknown names and values of the wrong kind throw TypeError.
  LinkerOptions& set(const std::string& option, OptionValue value);
  // Every name set() takes, cuda.core's order.
  [[nodiscard]] static std::vector<std::string> option_names();
  // The nvJitLink flags for linking to `target` (cubin or ptx); resolves the arch.
  [[nodiscard]] std::vector<std::string> flags(CodeType target, bool has_ltoir = false) const;
};

namespace detail {
void destroy_link_session(nvJitLinkHandle h) noexcept;
}  // namespace detail

class Linker {
 public:
  explicit Linker(LinkerOptions options = {}) : options_(std::move(options)) {}
  // Queues an input; returns *this for chaining.
  Linker& add(const ObjectCode& object);
  // The nvJitLink session the next link(target) completes (cuda.core's Linker.handle),
  // created now with the options and the inputs so far if none is open: a bad option or
  // arch throws CompileError here, before any link(). Move-only: the session is owned.
  [[nodiscard]] nvJitLinkHandle handle(CodeType target = CodeType::cubin);
  // Destroys the open session, if any (the logs stay readable); a later link() opens another.
  void close() noexcept { session_.reset(); }
  // Runs nvJitLink and returns the linked cubin or PTX (lowered names of the inputs are
  // kept). Throws CompileError with nvJitLink's log on failure. The logs stay readable.
  // Completes the open session when its flags and inputs fit; a session is completed once.
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
  // The session handle() opened: its flags and how many inputs it holds.
  detail::UniqueHandle<nvJitLinkHandle, &detail::destroy_link_session> session_;
  std::vector<std::string> session_flags_;
  size_t session_inputs_ = 0;
  // nvJitLink keeps pointers to the input names (its log quotes them) and may to the data:
  // the NUL-terminated PTX copies and names stay alive as long as the session.
  std::deque<std::string> session_text_;
  // Creates a session with `flags` and every input, or throws CompileError (logs kept).
  void open_session(const std::vector<std::string>& flags);
};

// Links `objects` in one call.
[[nodiscard]] ObjectCode link(const std::vector<ObjectCode>& objects, LinkerOptions options = {},
                              CodeType target = CodeType::cubin);

}  // namespace nanocuda
