// The fatbin container: a writer and a reader for uncompressed PTX and ELF (cubin) entries, no driver needed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nanocuda {

// One image in a fatbin: a cubin for a real architecture ("sm_90a") or PTX for a virtual
// one ("compute_90"), which the driver JIT-compiles for newer devices.
struct FatbinEntry {
  enum class Kind { ptx = 1, elf = 2 };
  Kind kind = Kind::elf;
  int arch = 0;                // compute capability as major*10 + minor: 90
  bool arch_specific = false;  // the "a" suffix (sm_90a): runs on that exact architecture only
  std::string bytes;           // the cubin, or the PTX text (without its NUL); empty when compressed

  // "sm_90a" for a cubin, "compute_90" for PTX.
  [[nodiscard]] std::string arch_name() const;
  // Whether the driver can run this entry on a device of compute capability `device_arch`
  // (90): a cubin within its major version (exactly, for "a"), PTX on any later device.
  [[nodiscard]] bool fits(int device_arch) const noexcept;
};

// Parses "sm_90a" (cubin) or "compute_90" (PTX) into kind/arch/arch_specific; throws
// ValueError naming `arch` for anything else (family "f" targets are not supported).
[[nodiscard]] FatbinEntry fatbin_target(const std::string& arch);

// The container: a 16-byte header (magic 0xBA55ED50, version 1) and, per entry, a 64-byte
// header (kind, payload size, architecture, 64-bit flag) and the payload padded to 8 bytes.
// PTX entries carry their NUL. Nothing is compressed.
[[nodiscard]] std::string make_fatbin(const std::vector<FatbinEntry>& entries);

// The entries of a fatbin (ours or fatbinary's); compressed payloads come back empty.
// Throws ValueError on a bad magic or a truncated container.
[[nodiscard]] std::vector<FatbinEntry> fatbin_entries(std::string_view fatbin);

}  // namespace nanocuda
