// The compiled-code cache: an in-process map in front of a directory of checked entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
//
// Cached cubins are loaded into the process, so the directory is trusted only when it is
// owned by this process's user and writable by nobody else (it is created with mode 0700,
// entries 0600); an entry must be a regular file (not a link) owned by the user and not
// group/other-writable (cache_trust.h). Anything else is never read or written: the compile goes on
// without the disk cache and a warning is queued once (take_warnings()).
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
  // $NANOCUDA_CACHE_DIR, else $XDG_CACHE_HOME/nanocuda, else $HOME/.cache/nanocuda, else
  // the account's home (password database)/.cache/nanocuda, else "" (no disk cache: never
  // a shared folder like /tmp). Read on every call, so the environment takes effect at once.
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
  // $NANOCUDA_CACHE_MAX_BYTES, else 256 MiB; 0 means unlimited. Throws ValueError when
  // the variable is set but is not a size (parse_byte_size), rather than ignoring it.
  [[nodiscard]] static std::uint64_t max_disk_bytes();
  // "268435456", "256M", "256MiB", "1G", "1GB": K/M/G/T and KiB..TiB are powers of 1024,
  // KB..TB powers of 1000. Throws ValueError naming NANOCUDA_CACHE_MAX_BYTES otherwise.
  [[nodiscard]] static std::uint64_t parse_byte_size(const std::string& text);
  // The warnings queued since the last call (an untrusted cache folder or entry), each
  // given once per process; the Python layer shows them with warnings.warn.
  [[nodiscard]] static std::vector<std::string> take_warnings();
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
