// Compiler and linker options by cuda.core's names: one table per tool, each value checked and turned into flags.
#pragma once

#include <span>
#include <string>
#include <variant>
#include <vector>

namespace nanocuda {

// A value given to a named option: a switch, a number, a word, or a list of words.
using OptionValue = std::variant<bool, long long, std::string, std::vector<std::string>>;

struct NamedOption {
  std::string name;
  OptionValue value;
};

// Throws TypeError: "`owner`: unknown option 'bogus' (did you mean 'x'?)", else listing
// `known`: the one wording for an option name nobody defines (ProgramOptions, LinkerOptions).
[[noreturn]] void throw_unknown_option(const char* owner, const std::string& name,
                                       const std::vector<std::string>& known);

namespace detail {

// How an option's value becomes flags.
enum class OptionKind {
  flag,        // bool: the flag when true, nothing when false
  true_false,  // bool: flag=true / flag=false
  on_off,      // bool: flag=on / flag=off
  one_zero,    // bool: flag=1 / flag=0 (libNVVM)
  integer,     // int: flag=N
  text,        // str: flag=VALUE
  path,        // str (a file): flag=VALUE; a bool is spelled flag=True/False, as cuda.core does
  text_list,   // str or list: flag=VALUE once per item
  joined,      // int/str or list: flag=A,B,C
  prefix_list, // str or list: flagVALUE once per item (-D, -U, -I)
  none,        // accepted; handled by the tool itself, adds no flag
};

struct OptionSpec {
  const char* name;
  OptionKind kind;
  const char* flag;
};

// The spec named `name` in `table`, or nullptr.
[[nodiscard]] const OptionSpec* find_option(std::span<const OptionSpec> table, const std::string& name);
// Appends the flags `value` stands for. A value of the wrong kind throws TypeError naming
// `owner` ("ProgramOptions"), the option and what it takes.
void append_flags(const char* owner, const OptionSpec& spec, const OptionValue& value,
                  std::vector<std::string>& out);
// Sets option `name` in `named` (replacing an earlier value) after checking, against
// `table`, that it exists and that `value` is of its kind; an unknown name throws as below,
// listing `known()` (called only then).
void set_named(const char* owner, std::span<const OptionSpec> table, std::vector<std::string> (*known)(),
               std::vector<NamedOption>& named, const std::string& name, OptionValue value);
// Up to 3 of `known` closest to `name` (edit distance), best first.
[[nodiscard]] std::vector<std::string> close_matches(const std::string& name,
                                                     const std::vector<std::string>& known);
// A value as the words an option of kind text_list/prefix_list takes.
[[nodiscard]] std::vector<std::string> as_words(const char* owner, const char* option,
                                                const OptionValue& value);
// True for a bool true; false for false; TypeError otherwise.
[[nodiscard]] bool as_bool(const char* owner, const char* option, const OptionValue& value);

}  // namespace detail
}  // namespace nanocuda
