// Links several objects (PTX, LTO-IR, cubin, fatbin) into one cubin with nvJitLink.
#pragma once

#include <string>
#include <vector>

#include "nanocuda/compile/object_code.h"

namespace nanocuda {

struct LinkerOptions {
  // Target ("sm_90a", "90a", ...); empty = Device(0)'s.
  std::string arch;
  bool debug = false;     // -g
  bool lineinfo = false;  // -lineinfo
  // Link-time optimisation; turned on automatically when any input is LTO-IR.
  bool lto = false;
  std::vector<std::string> extra_flags;
};

class Linker {
 public:
  explicit Linker(LinkerOptions options = {}) : options_(std::move(options)) {}
  // Queues an input; returns *this for chaining.
  Linker& add(const ObjectCode& object);
  // Runs nvJitLink and returns the linked cubin (lowered names of the inputs are kept).
  // Throws CompileError with nvJitLink's log on failure.
  [[nodiscard]] ObjectCode link() const;

 private:
  LinkerOptions options_;
  std::vector<ObjectCode> inputs_;
};

// Links `objects` in one call.
[[nodiscard]] ObjectCode link(const std::vector<ObjectCode>& objects, LinkerOptions options = {});

}  // namespace nanocuda
