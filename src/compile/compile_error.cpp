// CompileError: keeps the whole log and options, and picks out the first error line.
#include "nanocuda/compile/compile_error.h"

#include <sstream>

namespace nanocuda {

namespace {

std::string compose(const std::string& first, const std::string& log, const std::string& name) {
  std::string text = "compiling " + (name.empty() ? std::string("program") : name) + " failed";
  if (!first.empty()) text += ": " + first;
  if (!log.empty()) text += "\n" + log;
  return text;
}

}  // namespace

std::string CompileError::find_first_error(const std::string& log) {
  std::istringstream in(log);
  std::string line, first_nonempty;
  while (std::getline(in, line)) {
    if (first_nonempty.empty() && line.find_first_not_of(" \t\r") != std::string::npos)
      first_nonempty = line;
    if (line.find("error") != std::string::npos) return line;
  }
  return first_nonempty;
}

CompileError::CompileError(std::string log, std::vector<std::string> options,
                           std::string source_name, bool from_linker)
    : std::runtime_error(compose(find_first_error(log), log, source_name)),
      log_(std::move(log)),
      options_(std::move(options)),
      first_error_(find_first_error(log_)),
      from_linker_(from_linker) {}

}  // namespace nanocuda
