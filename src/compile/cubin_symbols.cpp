// Reads kernel names from a cubin's ELF symbol table (no driver): bounds-checked at every read.
#include "nanocuda/compile/cubin_symbols.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

constexpr uint32_t kSymtab = 2;           // SHT_SYMTAB
constexpr unsigned kFunc = 2;             // STT_FUNC
constexpr unsigned kGlobal = 1, kWeak = 2;  // STB_GLOBAL, STB_WEAK (NVRTC makes template instances weak)
constexpr unsigned kCudaEntry = 0x10;     // st_other bit the compiler sets on kernels

struct Truncated {};

// Little-endian reads that throw Truncated instead of reading past the end.
template <typename T>
T read(std::string_view b, uint64_t offset) {
  if (offset > b.size() || b.size() - offset < sizeof(T)) throw Truncated{};
  T v;
  std::memcpy(&v, b.data() + offset, sizeof(T));
  return v;
}

struct Section {
  uint32_t type;
  uint64_t offset, size, entsize;
  uint32_t link;
};

Section section(std::string_view b, uint64_t shoff, uint16_t shentsize, uint32_t i) {
  uint64_t at = shoff + uint64_t{i} * shentsize;
  return {read<uint32_t>(b, at + 4), read<uint64_t>(b, at + 24), read<uint64_t>(b, at + 32),
          read<uint64_t>(b, at + 56), read<uint32_t>(b, at + 40)};
}

std::vector<std::string> entry_names(std::string_view b) {
  const auto shoff = read<uint64_t>(b, 0x28);
  const auto shentsize = read<uint16_t>(b, 0x3A);
  const auto shnum = read<uint16_t>(b, 0x3C);
  std::vector<std::string> names;
  for (uint32_t i = 0; i < shnum; ++i) {
    const Section sh = section(b, shoff, shentsize, i);
    if (sh.type != kSymtab) continue;
    if (sh.link >= shnum) throw Truncated{};
    const uint64_t strings = section(b, shoff, shentsize, sh.link).offset;
    const uint64_t entsize = sh.entsize ? sh.entsize : 24;
    for (uint64_t pos = sh.offset; pos < sh.offset + sh.size; pos += entsize) {
      const auto st_name = read<uint32_t>(b, pos);
      const auto st_info = read<uint8_t>(b, pos + 4);
      const auto st_other = read<uint8_t>(b, pos + 5);
      const unsigned bind = st_info >> 4;
      if ((st_info & 0xF) != kFunc || (bind != kGlobal && bind != kWeak) || !(st_other & kCudaEntry))
        continue;
      const uint64_t start = strings + st_name;
      if (start >= b.size()) throw Truncated{};
      const size_t end = b.find('\0', start);
      if (end == std::string_view::npos) throw Truncated{};
      names.emplace_back(b.substr(start, end - start));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<std::string> cubin_kernel_names(std::string_view cubin) {
  if (cubin.size() < 5 || cubin.substr(0, 4) != "\x7f" "ELF" || cubin[4] != 2)
    throw ValueError("cubin_kernel_names: not a 64-bit ELF cubin");
  try {
    return entry_names(cubin);
  } catch (const Truncated&) {
    throw ValueError("cubin_kernel_names: a truncated or corrupt ELF cubin (" +
                     std::to_string(cubin.size()) + " bytes)");
  }
}

}  // namespace nanocuda
