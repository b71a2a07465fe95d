// The compiled-code cache: an in-process map in front of a directory of checked entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace nanocuda {

// Entries are keyed by a key string (everything that determines the output: source,
// flags, local include contents, NVRTC version, target). A file holds a header (magic,
// format version, lengths, checksum), the full key and the payload; a file whose header,
// checksum or key does not match is ignored (and later overwritten), never returned.
// Writes go to a unique temporary file renamed into place, so concurrent processes only
// ever see whole entries.
//
// Both levels are bounded. The directory holds at most $NANOCUDA_CACHE_MAX_BYTES (default
// 256 MiB; 0 means no limit): after a store that takes it past the limit, the entries used
// longest ago (a hit refreshes an entry's mtime) are deleted down to 3/4 of it. The
// in-process map holds at most 64 MiB and 512 entries, dropping the least recently used.
struct CompileCacheInfo {
  std::string directory;
  bool enabled = true;
  std::uint64_t disk_entries = 0;
  std::uint64_t disk_bytes = 0;
  std::uint64_t disk_max_bytes = 0;  // 0: unlimited
  std::uint64_t memory_entries = 0;
  std::uint64_t memory_bytes = 0;
  std::uint64_t memory_max_bytes = 0;
  std::uint64_t evicted = 0;         // disk entries this process deleted for the limit
  std::uint64_t rejected = 0;        // disk entries this process found corrupt and ignored
  std::string last_error;            // the last disk error this process met ("" if none)
};

class CompileCache {
 public:
  // $NANOCUDA_CACHE_DIR, else $XDG_CACHE_HOME/nanocuda, else ~/.cache/nanocuda.
  // Read on every call, so changing the environment takes effect at once.
  [[nodiscard]] static std::string directory();
  // False when $NANOCUDA_CACHE is "0" (or "off"/"false"): nothing is read or written,
  // in memory or on disk.
  [[nodiscard]] static bool enabled();
  // The payload stored under `key`, from memory, else from disk; nullopt on a miss.
  [[nodiscard]] static std::optional<std::string> load(const std::string& key);
  // Stores `payload` under `key` in memory and on disk. Disk errors (read-only home, full
  // disk) never fail the call (the cache is an optimisation): they are recorded in
  // info().last_error.
  static void store(const std::string& key, const std::string& payload) noexcept;
  // The file an entry for `key` lives in.
  [[nodiscard]] static std::string path_for(const std::string& key);
  // Forgets the in-process entries (the disk is untouched).
  static void clear_memory() noexcept;
  // $NANOCUDA_CACHE_MAX_BYTES, else 256 MiB; 0 means unlimited.
  [[nodiscard]] static std::uint64_t max_disk_bytes();
  // Sizes and counters of both levels (scans the directory).
  [[nodiscard]] static CompileCacheInfo info();
  // Deletes the least recently used entries until the directory holds at most `limit`
  // bytes; returns how many were deleted. store() calls it when over max_disk_bytes().
  static std::uint64_t trim_disk(std::uint64_t limit) noexcept;
};

namespace detail {
// 64-bit FNV-1a, seeded; used for file names and checksums, never for trust.
[[nodiscard]] std::uint64_t hash64(const void* data, std::size_t size,
                                   std::uint64_t seed = 14695981039346656037ull) noexcept;
}  // namespace detail

}  // namespace nanocuda
