// The fatbin container format, written and read field by field (little-endian, as the driver reads it).
#include "nanocuda/compile/fatbin.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

constexpr std::uint32_t kMagic = 0xBA55ED50u;
constexpr std::uint16_t kVersion = 1;
constexpr std::uint32_t kHeaderSize = 16;
constexpr std::uint32_t kEntryHeaderSize = 64;
constexpr std::uint32_t kPtxOptionsSize = 16;
// Entry flags: 0x1 = 64-bit addresses, 0x10 = Linux host; 0x100000 = arch-specific ("a").
constexpr std::uint64_t kFlags64BitLinux = 0x11;
constexpr std::uint64_t kFlagArchSpecific = 0x100000;
constexpr std::uint64_t kFlagCompressed = 0x2000;

template <class T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

template <class T>
T get(std::string_view in, std::size_t offset) {
  if (offset + sizeof(T) > in.size())
    throw ValueError("fatbin_entries: a truncated fatbin (" + std::to_string(in.size()) + " bytes)");
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  return value;
}

// (major, minor) of the PTX's ".version X.Y" line; (0, 0) when it has none.
std::pair<int, int> ptx_isa_version(const std::string& ptx) {
  std::size_t at = ptx.find(".version");
  if (at == std::string::npos) return {0, 0};
  int major = 0, minor = 0;
  if (std::sscanf(ptx.c_str() + at + 8, " %d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

}  // namespace

std::string FatbinEntry::arch_name() const {
  return (kind == Kind::ptx ? "compute_" : "sm_") + std::to_string(arch) + (arch_specific ? "a" : "");
}

bool FatbinEntry::fits(int device_arch) const noexcept {
  if (arch_specific) return arch == device_arch;
  if (kind == Kind::ptx) return arch <= device_arch;
  return arch / 10 == device_arch / 10 && arch <= device_arch;
}

FatbinEntry fatbin_target(const std::string& arch) {
  FatbinEntry e;
  std::string rest;
  if (arch.rfind("sm_", 0) == 0) {
    e.kind = FatbinEntry::Kind::elf;
    rest = arch.substr(3);
  } else if (arch.rfind("compute_", 0) == 0) {
    e.kind = FatbinEntry::Kind::ptx;
    rest = arch.substr(8);
  }
  if (!rest.empty() && rest.back() == 'a') {
    e.arch_specific = true;
    rest.pop_back();
  }
  bool digits = rest.size() >= 2 && rest.size() <= 3 &&
                rest.find_first_not_of("0123456789") == std::string::npos;
  if (!digits)
    throw ValueError("fatbin target \"" + arch + "\": expected sm_XY[a] (a cubin) or compute_XY[a] "
                     "(PTX), e.g. sm_90a or compute_90");
  e.arch = std::stoi(rest);
  return e;
}

std::string make_fatbin(const std::vector<FatbinEntry>& entries) {
  std::string body;
  for (const auto& e : entries) {
    std::string payload = e.bytes;
    if (e.kind == FatbinEntry::Kind::ptx) payload.push_back('\0');  // the driver reads PTX to its NUL
    payload.resize((payload.size() + 7) / 8 * 8, '\0');
    const bool ptx = e.kind == FatbinEntry::Kind::ptx;
    put<std::uint16_t>(body, static_cast<std::uint16_t>(e.kind));
    put<std::uint16_t>(body, 0x0101);                    // entry format version
    put<std::uint32_t>(body, kEntryHeaderSize + (ptx ? kPtxOptionsSize : 0));
    put<std::uint64_t>(body, payload.size());
    put<std::uint32_t>(body, 0);                         // compressed size: not compressed
    // PTX entries carry a (here empty) JIT options block after the header; tools reject
    // PTX entries without one.
    put<std::uint32_t>(body, ptx ? kEntryHeaderSize : 0);
    // The version pair fatbinary writes: minor then major of the PTX ISA (".version 9.0")
    // for PTX, 8 and 1 for an ELF.
    auto [major, minor] = ptx ? ptx_isa_version(e.bytes) : std::pair{1, 8};
    put<std::uint16_t>(body, static_cast<std::uint16_t>(minor));
    put<std::uint16_t>(body, static_cast<std::uint16_t>(major));
    put<std::uint32_t>(body, static_cast<std::uint32_t>(e.arch));
    put<std::uint32_t>(body, 0);                         // object name offset: none
    put<std::uint32_t>(body, 0);                         // object name length
    put<std::uint64_t>(body, kFlags64BitLinux | (e.arch_specific ? kFlagArchSpecific : 0));
    put<std::uint64_t>(body, 0);
    put<std::uint64_t>(body, 0);                         // uncompressed size: not compressed
    if (ptx) {  // the options block as fatbinary writes it with no options: 0x48, then zeros
      put<std::uint64_t>(body, kEntryHeaderSize + 8);
      put<std::uint64_t>(body, 0);
    }
    body += payload;
  }
  std::string out;
  put<std::uint32_t>(out, kMagic);
  put<std::uint16_t>(out, kVersion);
  put<std::uint16_t>(out, kHeaderSize);
  put<std::uint64_t>(out, body.size());
  return out + body;
}

std::vector<FatbinEntry> fatbin_entries(std::string_view fatbin) {
  if (fatbin.size() < kHeaderSize || get<std::uint32_t>(fatbin, 0) != kMagic)
    throw ValueError("fatbin_entries: not a fatbin (no 0xBA55ED50 magic)");
  std::size_t begin = get<std::uint16_t>(fatbin, 6);
  std::size_t end = begin + get<std::uint64_t>(fatbin, 8);
  if (end > fatbin.size())
    throw ValueError("fatbin_entries: a truncated fatbin (" + std::to_string(fatbin.size()) + " bytes)");
  std::vector<FatbinEntry> out;
  for (std::size_t at = begin; at < end;) {
    FatbinEntry e;
    auto kind = get<std::uint16_t>(fatbin, at);
    std::size_t header = get<std::uint32_t>(fatbin, at + 4);
    std::size_t size = get<std::uint64_t>(fatbin, at + 8);
    if (kind != 1 && kind != 2)
      throw ValueError("fatbin_entries: unknown entry kind " + std::to_string(kind));
    if (header < kEntryHeaderSize || at + header + size > end)
      throw ValueError("fatbin_entries: a truncated fatbin (" + std::to_string(fatbin.size()) + " bytes)");
    e.kind = static_cast<FatbinEntry::Kind>(kind);
    e.arch = static_cast<int>(get<std::uint32_t>(fatbin, at + 28));
    auto flags = get<std::uint64_t>(fatbin, at + 40);
    e.arch_specific = (flags & kFlagArchSpecific) != 0;
    if (!(flags & kFlagCompressed)) {
      e.bytes.assign(fatbin.substr(at + header, size));
      if (e.kind == FatbinEntry::Kind::ptx) e.bytes.resize(std::strlen(e.bytes.c_str()));
    }
    out.push_back(std::move(e));
    at += header + size;
  }
  return out;
}

}  // namespace nanocuda
