// What kind of value each kernel parameter holds (integer, floating, pointer, struct), read
// from the kernel's C++-mangled name, so a Python float is not packed into a `float*`.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace nanocuda {

enum class ParamClass : std::uint8_t {
  Unknown,    // extern "C" kernels, templates, anything the reader does not understand
  Integer,    // bool, char, short, int, long, __int128 (signed or not), enums are Aggregate
  Floating,   // float, double, long double, _Float16
  Pointer,    // T*, references, nullptr_t
  Aggregate,  // a named type: struct, class, union or enum (CUtensorMap, __half, ...)
};

// The class of every parameter of an Itanium-mangled function name ("_Z5saxpyfPKfS0_Pfm"
// gives Floating, Pointer, Pointer, Pointer, Integer). Empty when the name is not mangled
// or uses a construct the reader does not follow (templates, std:: abbreviations, vector
// types): the caller then checks sizes only. A wrong class would reject a correct call,
// so the reader gives up rather than guesses.
[[nodiscard]] std::vector<ParamClass> param_classes_from_mangled_name(std::string_view name);

// "a pointer", "a floating-point value", ... for error messages.
[[nodiscard]] const char* describe(ParamClass c) noexcept;

}  // namespace nanocuda
