// Named options: value checks, flag spelling, and "did you mean" for unknown names.
#include "nanocuda/compile/named_options.h"

#include <algorithm>

#include "nanocuda/driver/error.h"

namespace nanocuda::detail {

namespace {

const char* kind_words(OptionKind kind) {
  switch (kind) {
    case OptionKind::flag:
    case OptionKind::true_false:
    case OptionKind::on_off:
    case OptionKind::one_zero: return "a bool";
    case OptionKind::integer: return "an int";
    case OptionKind::text: return "a str";
    case OptionKind::path: return "a str (a file name) or a bool";
    case OptionKind::joined: return "an int, a str or a list of them";
    default: return "a str or a list of str";
  }
}

[[noreturn]] void wrong_kind(const char* owner, const OptionSpec& spec) {
  throw TypeError(std::string(owner) + ": option '" + spec.name + "' takes " + kind_words(spec.kind));
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

const OptionSpec* find_option(std::span<const OptionSpec> table, const std::string& name) {
  for (const auto& spec : table)
    if (name == spec.name) return &spec;
  return nullptr;
}

bool as_bool(const char* owner, const char* option, const OptionValue& value) {
  if (const bool* b = std::get_if<bool>(&value)) return *b;
  throw TypeError(std::string(owner) + ": option '" + option + "' takes a bool");
}

std::vector<std::string> as_words(const char* owner, const char* option, const OptionValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return {*s};
  if (const auto* list = std::get_if<std::vector<std::string>>(&value)) return *list;
  if (const auto* n = std::get_if<long long>(&value)) return {std::to_string(*n)};
  throw TypeError(std::string(owner) + ": option '" + option + "' takes a str or a list of str");
}

void append_flags(const char* owner, const OptionSpec& spec, const OptionValue& value,
                  std::vector<std::string>& out) {
  const std::string flag = spec.flag;
  switch (spec.kind) {
    case OptionKind::flag:
      if (!std::holds_alternative<bool>(value)) wrong_kind(owner, spec);
      if (std::get<bool>(value)) out.push_back(flag);
      return;
    case OptionKind::true_false:
    case OptionKind::on_off:
    case OptionKind::one_zero: {
      if (!std::holds_alternative<bool>(value)) wrong_kind(owner, spec);
      bool on = std::get<bool>(value);
      const char* word = spec.kind == OptionKind::true_false ? (on ? "true" : "false")
                         : spec.kind == OptionKind::on_off   ? (on ? "on" : "off")
                                                             : (on ? "1" : "0");
      out.push_back(flag + "=" + word);
      return;
    }
    case OptionKind::integer:
      if (!std::holds_alternative<long long>(value)) wrong_kind(owner, spec);
      if (long long n = std::get<long long>(value); n < 0 || n > 0x7fffffff)
        throw ValueError(std::string(owner) + ": option '" + spec.name + "' = " + std::to_string(n) +
                         " is out of range: 0 to 2147483647");
      out.push_back(flag + "=" + std::to_string(std::get<long long>(value)));
      return;
    case OptionKind::text:
      if (!std::holds_alternative<std::string>(value)) wrong_kind(owner, spec);
      out.push_back(flag + "=" + std::get<std::string>(value));
      return;
    case OptionKind::path:
      if (const bool* b = std::get_if<bool>(&value)) out.push_back(flag + (*b ? "=True" : "=False"));
      else if (const auto* s = std::get_if<std::string>(&value)) out.push_back(flag + "=" + *s);
      else wrong_kind(owner, spec);
      return;
    case OptionKind::text_list:
      for (const auto& w : as_words(owner, spec.name, value)) out.push_back(flag + "=" + w);
      return;
    case OptionKind::prefix_list:
      for (const auto& w : as_words(owner, spec.name, value)) out.push_back(flag + w);
      return;
    case OptionKind::joined: {
      std::string joined;
      for (const auto& w : as_words(owner, spec.name, value)) joined += (joined.empty() ? "" : ",") + w;
      if (!joined.empty()) out.push_back(flag + "=" + joined);
      return;
    }
    case OptionKind::none:
      return;
  }
}

std::vector<std::string> close_matches(const std::string& name, const std::vector<std::string>& known) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& k : known) {
    size_t d = edit_distance(name, k);
    // A prefix or substring of a long name is a match too ("fast_math" -> "use_fast_math").
    bool inside = name.size() >= 3 && (k.find(name) != std::string::npos || name.find(k) != std::string::npos);
    if (inside) d = std::min<size_t>(d, 1);
    if (d <= std::max<size_t>(2, name.size() / 3)) scored.emplace_back(d, k);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace nanocuda::detail

namespace nanocuda {

void throw_unknown_option(const char* owner, const std::string& name, const std::vector<std::string>& known) {
  std::string msg = std::string(owner) + ": unknown option '" + name + "'";
  auto close = detail::close_matches(name, known);
  if (!close.empty()) {
    msg += " (did you mean ";
    for (size_t i = 0; i < close.size(); ++i) msg += (i ? ", '" : "'") + close[i] + "'";
    msg += "?)";
  } else {
    msg += "; known options: ";
    for (size_t i = 0; i < known.size(); ++i) msg += (i ? ", " : "") + known[i];
  }
  throw TypeError(msg);
}

}  // namespace nanocuda

namespace nanocuda::detail {

void set_named(const char* owner, std::span<const OptionSpec> table, std::vector<std::string> (*known)(),
               std::vector<NamedOption>& named, const std::string& name, OptionValue value) {
  const OptionSpec* spec = find_option(table, name);
  if (!spec) throw_unknown_option(owner, name, known());
  std::vector<std::string> check;
  append_flags(owner, *spec, value, check);  // type check now, not at compile or link
  for (auto& n : named)
    if (n.name == name) {
      n.value = std::move(value);
      return;
    }
  named.push_back({name, std::move(value)});
}

}  // namespace nanocuda::detail
