// TMA enum names and parsing, generated from the table in tma_enums.inc.
#include "nanocuda/tma/tma_names.h"

#include <cuda.h>

#include <cctype>

namespace nanocuda {

namespace {

struct Row {
  TmaEnum kind;
  int value;
  const char* name;
  long number;  // element bits (DataType) or the byte-count spelling (-1: none)
};

constexpr Row kRows[] = {
#define X(kind, value, name, number) {TmaEnum::kind, static_cast<int>(value), name, number},
#include "nanocuda/tma/tma_enums.inc"
#undef X
};

bool same_text(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

const char* tma_enum_name(TmaEnum kind, int value) noexcept {
  for (const Row& r : kRows)
    if (r.kind == kind && r.value == value) return r.name;
  return "unknown";
}

std::optional<int> tma_enum_by_name(TmaEnum kind, std::string_view name) {
  for (const Row& r : kRows) {
    if (r.kind != kind) continue;
    if (same_text(name, r.name)) return r.value;
    if (kind != TmaEnum::DataType && r.number >= 0 && name == std::to_string(r.number))
      return r.value;
  }
  return std::nullopt;
}

std::optional<int> tma_enum_by_bytes(TmaEnum kind, long bytes) noexcept {
  if (kind == TmaEnum::DataType) return std::nullopt;
  for (const Row& r : kRows)
    if (r.kind == kind && r.number >= 0 && r.number == bytes) return r.value;
  return std::nullopt;
}

std::string tma_enum_choices(TmaEnum kind) {
  std::string out;
  for (const Row& r : kRows) {
    if (r.kind != kind) continue;
    if (!out.empty()) out += ", ";
    if (kind != TmaEnum::DataType && r.number >= 0) out += std::to_string(r.number) + "/";
    out += std::string("'") + r.name + "'";
  }
  return out;
}

int tma_element_bits(int dtype) noexcept {
  for (const Row& r : kRows)
    if (r.kind == TmaEnum::DataType && r.value == dtype) return static_cast<int>(r.number);
  return 0;
}

}  // namespace nanocuda
