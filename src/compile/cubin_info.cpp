// Reads a cubin's symbol table and .nv.info.<kernel> attribute sections (ELF64, little-endian).
#include "nanocuda/compile/cubin_info.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>

#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

template <class T>
T get(std::string_view in, std::size_t offset) {
  if (offset > in.size() || sizeof(T) > in.size() - offset)
    throw ValueError("cubin reader: a truncated or corrupt ELF cubin (" + std::to_string(in.size()) +
                     " bytes)");
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  return value;
}

struct Section {
  std::uint32_t name, type;
  std::uint64_t offset, size;
  std::uint32_t link;
  std::uint64_t entsize;
};

std::string c_string(std::string_view in, std::size_t offset) {
  if (offset >= in.size()) throw ValueError("cubin reader: a string outside the ELF cubin");
  std::size_t end = in.find('\0', offset);
  if (end == std::string_view::npos) throw ValueError("cubin reader: an unterminated ELF string");
  return std::string(in.substr(offset, end - offset));
}

constexpr std::uint32_t kSymtab = 2;
// .nv.info attribute formats (a byte) and the ids this reader needs.
constexpr std::uint8_t kFormatSized = 0x04;   // a u16 size then that many bytes
constexpr std::uint8_t kFormatHalf = 0x03;    // a u16 value
constexpr std::uint8_t kFormatByte = 0x02;    // a u8 value
constexpr std::uint8_t kKparamInfo = 0x17;    // u32 index, u16 ordinal, u16 offset, u32 (size << 18 | ...)

ParamLayout read_layout(std::string_view cubin, const Section& info) {
  std::map<std::uint16_t, ParamInfo> by_ordinal;
  for (std::uint64_t at = info.offset, end = info.offset + info.size; at + 2 <= end;) {
    auto format = get<std::uint8_t>(cubin, at);
    auto attribute = get<std::uint8_t>(cubin, at + 1);
    at += 2;
    if (format == kFormatSized) {
      auto size = get<std::uint16_t>(cubin, at);
      if (attribute == kKparamInfo && size >= 12) {
        auto ordinal = get<std::uint16_t>(cubin, at + 6);
        auto offset = get<std::uint16_t>(cubin, at + 8);
        auto bits = get<std::uint32_t>(cubin, at + 10);
        by_ordinal[ordinal] = ParamInfo{offset, (bits >> 18) & 0x3fff};
      }
      at += 2 + size;
    } else if (format == kFormatHalf) {
      at += 2;
    } else if (format == kFormatByte) {
      at += 1;
    }
  }
  ParamLayout layout;
  for (const auto& [ordinal, param] : by_ordinal) layout.params.push_back(param);
  return layout;
}

}  // namespace

std::vector<CubinKernel> cubin_kernels(std::string_view cubin) {
  if (cubin.size() < 64 || cubin.substr(0, 4) != "\x7f" "ELF" || cubin[4] != 2)
    throw ValueError("cubin reader: not a 64-bit ELF cubin");
  auto shoff = get<std::uint64_t>(cubin, 0x28);
  auto shentsize = get<std::uint16_t>(cubin, 0x3A);
  auto shnum = get<std::uint16_t>(cubin, 0x3C);
  auto shstrndx = get<std::uint16_t>(cubin, 0x3E);
  std::vector<Section> sections;
  for (std::size_t i = 0; i < shnum; ++i) {
    std::size_t at = shoff + i * shentsize;
    sections.push_back({get<std::uint32_t>(cubin, at), get<std::uint32_t>(cubin, at + 4),
                        get<std::uint64_t>(cubin, at + 0x18), get<std::uint64_t>(cubin, at + 0x20),
                        get<std::uint32_t>(cubin, at + 0x28), get<std::uint64_t>(cubin, at + 0x38)});
  }
  if (shstrndx >= sections.size()) throw ValueError("cubin reader: no section name table");
  std::map<std::string, const Section*> by_name;
  for (const auto& s : sections) by_name[c_string(cubin, sections[shstrndx].offset + s.name)] = &s;

  std::vector<CubinKernel> out;
  for (const auto& sh : sections) {
    if (sh.type != kSymtab) continue;
    if (sh.link >= sections.size()) throw ValueError("cubin reader: a symbol table without strings");
    std::uint64_t strings = sections[sh.link].offset, entsize = sh.entsize ? sh.entsize : 24;
    for (std::uint64_t at = sh.offset; at + entsize <= sh.offset + sh.size; at += entsize) {
      auto st_name = get<std::uint32_t>(cubin, at);
      auto info = get<std::uint8_t>(cubin, at + 4);
      auto other = get<std::uint8_t>(cubin, at + 5);
      // FUNC, GLOBAL or WEAK (NVRTC makes template instantiations weak), CUDA entry (0x10).
      if ((info & 0xF) != 2 || ((info >> 4) != 1 && (info >> 4) != 2) || !(other & 0x10)) continue;
      CubinKernel k{c_string(cubin, strings + st_name), {}};
      if (auto it = by_name.find(".nv.info." + k.name); it != by_name.end())
        k.layout = read_layout(cubin, *it->second);
      out.push_back(std::move(k));
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> cubin_kernel_names(std::string_view cubin) {
  std::vector<std::string> names;
  for (auto& k : cubin_kernels(cubin)) names.push_back(std::move(k.name));
  return names;
}

}  // namespace nanocuda
