// C++ call names in core error text -> the Python names a Python user reads (errors.cpp uses it).
#pragma once

#include <string>
#include <string_view>

namespace nanocuda::py {

// The Python name of one C++ call: the table's entry where the names differ
// ("Buffer::adopt" -> "Buffer.from_handle"), else `A::b` -> `A.b`; other text is returned as is.
[[nodiscard]] std::string python_call_name(std::string_view cxx);

// `message` with every C++ call name in it (a `Class::member` token, or a table entry such as
// "nanocuda::fill_async") spelled the Python way, and the C++ arguments it names
// ("(non_blocking = true)") as a Python caller passes them.
[[nodiscard]] std::string python_words(std::string_view message);

}  // namespace nanocuda::py
