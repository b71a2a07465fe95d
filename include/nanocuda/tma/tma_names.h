// Names and parsing of TMA enums (dtype, interleave, swizzle, L2 promotion, OOB fill), all
// generated from the one table in tma_enums.inc.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nanocuda {

enum class TmaEnum { DataType, Interleave, Swizzle, L2Promotion, OobFill };

// TensorMapOptions leaves swizzle unset for "auto"; parsing reports it as this value.
inline constexpr int kTmaSwizzleAuto = -1;

// The value's name ("128B", "float16"), or "unknown".
[[nodiscard]] const char* tma_enum_name(TmaEnum kind, int value) noexcept;
// The value spelled `name`, case-insensitively, or (kinds other than DataType) by its byte
// count written as digits ("128"); nullopt when nothing matches.
[[nodiscard]] std::optional<int> tma_enum_by_name(TmaEnum kind, std::string_view name);
// The value whose byte count is `bytes` (kinds other than DataType); nullopt when none.
[[nodiscard]] std::optional<int> tma_enum_by_bytes(TmaEnum kind, long bytes) noexcept;
// Every accepted spelling, for errors: "0/'none', 16/'16B', 32/'32B'".
[[nodiscard]] std::string tma_enum_choices(TmaEnum kind);
// Bits per element of a TMA data type (4 for the 16U4 packing), 0 if unknown.
[[nodiscard]] int tma_element_bits(int dtype) noexcept;

}  // namespace nanocuda
