// A small reader for the parameter list of Itanium-mangled names (what NVRTC and nvcc emit
// for kernels that are not extern "C"): only what kernel signatures use, giving up otherwise.
#include "nanocuda/compile/param_class.h"

#include <cstddef>
#include <optional>

namespace nanocuda {

namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  std::vector<ParamClass> parse() {
    if (!eat("_Z")) return {};
    eat('L');  // internal linkage (a static function)
    if (!function_name()) return {};
    std::vector<ParamClass> classes;
    if (s_.substr(at_) == "v") return classes;  // no parameters
    while (at_ < s_.size()) {
      std::optional<ParamClass> c = type();
      if (!c) return {};
      classes.push_back(*c);
    }
    return classes;
  }

 private:
  std::string_view s_;
  std::size_t at_ = 0;
  std::vector<ParamClass> subs_;  // substitution candidates, in the order the ABI numbers them

  bool eat(char c) {
    if (at_ < s_.size() && s_[at_] == c) return ++at_, true;
    return false;
  }
  bool eat(std::string_view prefix) {
    if (s_.substr(at_, prefix.size()) == prefix) return at_ += prefix.size(), true;
    return false;
  }
  // <source-name> ::= <length> <identifier>
  bool source_name() {
    std::size_t n = 0, start = at_;
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9' && n < 100000)
      n = n * 10 + static_cast<std::size_t>(s_[at_++] - '0');
    if (at_ == start || n == 0 || at_ + n > s_.size()) return false;
    at_ += n;
    return true;
  }
  // The function's own name: unscoped, or N <prefixes> <name> E. Prefixes are substitution
  // candidates; the function's full name is not. Templates (I...E) are not followed.
  bool function_name() {
    if (!eat('N')) return source_name() && !(at_ < s_.size() && s_[at_] == 'I');
    while (at_ < s_.size() && (s_[at_] == 'K' || s_[at_] == 'V' || s_[at_] == 'r')) ++at_;
    int parts = 0;
    while (!eat('E')) {
      if (parts > 0) subs_.push_back(ParamClass::Aggregate);  // the previous prefix
      if (!source_name()) return false;
      ++parts;
    }
    return parts > 0;
  }
  // S_ is candidate 0, S<base-36>_ is candidate n+1.
  std::optional<ParamClass> substitution() {
    std::size_t index = 0;
    if (!eat('_')) {
      std::size_t n = 0, start = at_;
      while (at_ < s_.size() && ((s_[at_] >= '0' && s_[at_] <= '9') || (s_[at_] >= 'A' && s_[at_] <= 'Z')))
        n = n * 36 + static_cast<std::size_t>(s_[at_] <= '9' ? s_[at_] - '0' : s_[at_] - 'A' + 10), ++at_;
      if (at_ == start || !eat('_')) return std::nullopt;
      index = n + 1;
    }
    if (index >= subs_.size()) return std::nullopt;
    return subs_[index];
  }
  // A named type: <source-name> or N <source-name>+ E; each prefix and the whole are
  // candidates. S<n>_ may start the nested name.
  std::optional<ParamClass> class_type(bool nested) {
    if (!nested) {
      if (!source_name()) return std::nullopt;
      subs_.push_back(ParamClass::Aggregate);
      return ParamClass::Aggregate;
    }
    int parts = 0;
    if (at_ < s_.size() && s_[at_] == 'S') {
      ++at_;
      if (!substitution()) return std::nullopt;
      parts = 1;
    }
    while (!eat('E')) {
      if (!source_name()) return std::nullopt;
      subs_.push_back(ParamClass::Aggregate);
      ++parts;
    }
    if (parts == 0) return std::nullopt;
    return ParamClass::Aggregate;
  }
  std::optional<ParamClass> type() {
    if (at_ >= s_.size()) return std::nullopt;
    const char c = s_[at_++];
    switch (c) {
      case 'b': case 'c': case 'a': case 'h': case 's': case 't': case 'i': case 'j':
      case 'l': case 'm': case 'x': case 'y': case 'n': case 'o': case 'w':
        return ParamClass::Integer;
      case 'f': case 'd': case 'e': case 'g': return ParamClass::Floating;
      case 'D':
        if (eat('h') || eat("F16_")) return ParamClass::Floating;
        if (eat('s') || eat('i') || eat('u')) return ParamClass::Integer;
        if (eat('n')) return ParamClass::Pointer;
        return std::nullopt;  // vector types, decltype, ...
      case 'P': case 'R': case 'O': {
        if (!type()) return std::nullopt;
        subs_.push_back(ParamClass::Pointer);
        return ParamClass::Pointer;
      }
      case 'K': case 'V': case 'r': {
        while (at_ < s_.size() && (s_[at_] == 'K' || s_[at_] == 'V' || s_[at_] == 'r')) ++at_;
        std::optional<ParamClass> inner = type();
        if (!inner) return std::nullopt;
        subs_.push_back(*inner);  // the qualified type is a candidate of its own
        return inner;
      }
      case 'S':
        if (at_ < s_.size() && (s_[at_] == '_' || (s_[at_] >= '0' && s_[at_] <= '9') ||
                                (s_[at_] >= 'A' && s_[at_] <= 'Z')))
          return substitution();
        return std::nullopt;  // St, Sa, Ss...: std:: abbreviations are not followed
      case 'N': return class_type(true);
      default:
        if (c >= '1' && c <= '9') {
          --at_;
          return class_type(false);
        }
        return std::nullopt;  // templates (T_, I), arrays, functions, vendor qualifiers
    }
  }
};

}  // namespace

std::vector<ParamClass> param_classes_from_mangled_name(std::string_view name) {
  return Reader(name).parse();
}

const char* describe(ParamClass c) noexcept {
  switch (c) {
    case ParamClass::Integer: return "an integer";
    case ParamClass::Floating: return "a floating-point value";
    case ParamClass::Pointer: return "a pointer";
    case ParamClass::Aggregate: return "a struct or enum";
    default: return "a value";
  }
}

}  // namespace nanocuda
