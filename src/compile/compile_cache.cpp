// The compiled-code cache: in-memory map, then checked files written atomically (std::filesystem).
#include "nanocuda/compile/compile_cache.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nanocuda/compile/cache_trust.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace detail {
std::uint64_t hash64(const void* data, std::size_t size, std::uint64_t seed) noexcept {
  auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = seed;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
}  // namespace detail

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'N', 'C', 'U', 'C', 'A', 'C', 'H', 'E'};
constexpr std::uint32_t kFormat = 1;

struct Header {
  char magic[8];
  std::uint32_t format;
  std::uint32_t reserved;
  std::uint64_t key_size;
  std::uint64_t payload_size;
  std::uint64_t checksum;  // hash64 of key then payload
};

constexpr std::uint64_t kDefaultDiskLimit = 256ull << 20;
constexpr std::uint64_t kMemoryLimitBytes = 64ull << 20;
constexpr std::size_t kMemoryLimitEntries = 512;

// The in-process level. Every access holds g_memory_mutex (never the GIL: C++ users and
// threads without it share this map), so it is safe under free-threaded Python too.
struct MemoryEntry {
  std::string payload;
  std::uint64_t last_use;
};
std::mutex g_memory_mutex;
std::uint64_t g_memory_bytes = 0;  // guarded by g_memory_mutex
std::uint64_t g_tick = 0;          // guarded by g_memory_mutex
std::atomic<std::uint64_t> g_evicted{0};
std::atomic<std::uint64_t> g_rejected{0};
std::unordered_map<std::string, MemoryEntry>& memory() {
  static auto* map = new std::unordered_map<std::string, MemoryEntry>();  // never destroyed
  return *map;
}

// Inserts under g_memory_mutex, then drops least recently used entries past the limits.
// A linear scan per eviction: the map is small (<= 512) and stores follow a compile.
void memory_put_locked(const std::string& key, const std::string& payload) {
  if (key.size() + payload.size() > kMemoryLimitBytes) return;  // would evict everything
  auto& map = memory();
  if (auto it = map.find(key); it != map.end()) {
    g_memory_bytes -= it->first.size() + it->second.payload.size();
    map.erase(it);
  }
  while (!map.empty() && (map.size() >= kMemoryLimitEntries ||
                          g_memory_bytes + key.size() + payload.size() > kMemoryLimitBytes)) {
    auto oldest = std::min_element(map.begin(), map.end(), [](const auto& a, const auto& b) {
      return a.second.last_use < b.second.last_use;
    });
    g_memory_bytes -= oldest->first.size() + oldest->second.payload.size();
    map.erase(oldest);
  }
  map.emplace(key, MemoryEntry{payload, ++g_tick});
  g_memory_bytes += key.size() + payload.size();
}

// The last disk error (a failed write, rename, listing...), for CompileCache::info(): the
// cache never fails a compile, but a cache that silently never writes should be visible.
std::mutex g_error_mutex;
std::string g_last_error;  // guarded by g_error_mutex

void record_error(const char* what, const fs::path& path, const std::error_code& ec) noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_error_mutex);
    g_last_error = std::string(what) + " " + path.string() + ": " + ec.message();
  } catch (...) {
  }
}

// Warnings for the user (an untrusted cache folder or file), each said once per process:
// the Python layer turns them into warnings.warn after a compile (take_warnings()).
std::mutex g_warn_mutex;
std::set<std::string> g_warned;         // guarded by g_warn_mutex
std::vector<std::string> g_warnings;    // guarded by g_warn_mutex

void warn_once(const std::string& about, const std::string& message) noexcept {
  try {
    {
      std::lock_guard<std::mutex> lock(g_warn_mutex);
      if (!g_warned.insert(about).second) return;
      g_warnings.push_back(message);
    }
    std::lock_guard<std::mutex> lock(g_error_mutex);
    g_last_error = message;
  } catch (...) {
  }
}

void warn_untrusted(const std::string& path, const std::string& problem) {
  warn_once(path, "nanocuda: not using the compile cache: " + problem +
                      "; compiling without it. Make it private (chown it to you, chmod go-w) or "
                      "set NANOCUDA_CACHE_DIR to a folder of your own.");
}

// Whether entries may be read from (or written to) `dir`: ours and private. With `create`,
// a missing folder is made private (create_private_directory).
bool disk_usable(const std::string& dir, bool create) {
  if (dir.empty()) return false;  // no home folder: no disk cache
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (ec) record_error("cannot read", dir, ec);
    if (ec || !create) return false;  // a plain miss when only reading
    create_private_directory(dir, ec);
    if (ec) {
      record_error("cannot create", dir, ec);
      return false;
    }
  }
  if (std::string problem = cache_trust_problem(dir); !problem.empty()) {
    warn_untrusted(dir, problem);
    return false;
  }
  return true;
}

struct DiskEntry {
  fs::path path;
  std::uint64_t size;
  fs::file_time_type mtime;
};

// The cache's entry files (*.ncc) and their sizes; temporaries are not counted. A missing
// directory is an empty cache; any other listing error is recorded.
std::vector<DiskEntry> list_entries(const std::string& dir) {
  std::vector<DiskEntry> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.extension() != ".ncc") continue;
    // Entries another process deletes meanwhile are skipped, not errors.
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec)) continue;
    std::uint64_t size = it->file_size(entry_ec);
    if (entry_ec) continue;
    fs::file_time_type mtime = it->last_write_time(entry_ec);
    if (entry_ec) continue;
    out.push_back({path, size, mtime});
  }
  if (ec && ec != std::errc::no_such_file_or_directory) record_error("cannot list", dir, ec);
  return out;
}

std::uint64_t checksum(const std::string& key, const char* payload, std::size_t size) {
  return detail::hash64(payload, size, detail::hash64(key.data(), key.size()));
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n <= 0) {
      if (n == 0) errno = EIO;  // nothing written and no reason given
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> read_entry(const std::string& path, const std::string& key) {
  // O_NOFOLLOW: an entry that is a symbolic link is refused (ELOOP), never followed.
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) warn_untrusted(path, path + " is a symbolic link");
    else if (errno != ENOENT)  // deleted since exists(): a miss
      record_error("cannot open", path, std::error_code(errno, std::generic_category()));
    return std::nullopt;
  }
  const std::string problem = cache_trust_problem(fd, path);
  FILE* f = problem.empty() ? ::fdopen(fd, "rb") : nullptr;
  if (!f) {
    ::close(fd);
    if (!problem.empty()) warn_untrusted(path, problem);
    return std::nullopt;
  }
  std::optional<std::string> result;
  Header h{};
  long file_size = std::fseek(f, 0, SEEK_END) == 0 ? std::ftell(f) : -1;
  std::rewind(f);
  // The header's lengths must add up to the file's size before anything is allocated, so
  // a truncated or garbage file can neither be returned nor make us allocate gigabytes.
  if (file_size >= 0 && std::fread(&h, sizeof h, 1, f) == 1 &&
      std::memcmp(h.magic, kMagic, 8) == 0 && h.format == kFormat && h.key_size == key.size() &&
      h.payload_size < (1ull << 32) &&
      static_cast<std::uint64_t>(file_size) == sizeof h + h.key_size + h.payload_size) {
    std::string stored_key(h.key_size, '\0');
    std::string payload(h.payload_size, '\0');
    if (std::fread(stored_key.data(), 1, stored_key.size(), f) == stored_key.size() &&
        std::fread(payload.data(), 1, payload.size(), f) == payload.size() &&
        std::fgetc(f) == EOF && stored_key == key &&
        checksum(key, payload.data(), payload.size()) == h.checksum)
      result = std::move(payload);
  }
  std::fclose(f);
  if (!result) g_rejected.fetch_add(1, std::memory_order_relaxed);
  return result;
}

}  // namespace

std::string CompileCache::directory() {
  if (const char* d = std::getenv("NANOCUDA_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/nanocuda";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/nanocuda";
  // No $HOME (services, some containers): the account's home from the password database,
  // never a shared folder such as /tmp that another user could create first.
  struct passwd pw{};
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &found) == 0 && found && found->pw_dir &&
      *found->pw_dir && std::string(found->pw_dir) != "/")
    return std::string(found->pw_dir) + "/.cache/nanocuda";
  return "";  // no home at all: no disk cache (the in-process level still works)
}

bool CompileCache::enabled() {
  const char* v = std::getenv("NANOCUDA_CACHE");
  if (!v) return true;
  std::string s = v;
  return !(s == "0" || s == "off" || s == "false" || s == "no");
}

std::string CompileCache::path_for(const std::string& key) {
  return directory() + "/" + hex(detail::hash64(key.data(), key.size())) + ".ncc";
}

std::optional<std::string> CompileCache::load(const std::string& key) {
  if (!enabled()) return std::nullopt;
  {
    std::lock_guard<std::mutex> lock(g_memory_mutex);
    if (auto it = memory().find(key); it != memory().end()) {
      it->second.last_use = ++g_tick;
      return it->second.payload;
    }
  }
  const std::string dir = directory();
  if (!disk_usable(dir, false)) return std::nullopt;
  const std::string path = path_for(key);
  std::error_code ec;
  if (!fs::exists(path, ec)) {  // a plain miss, or a cache that cannot be read
    if (ec) record_error("cannot read", path, ec);
    return std::nullopt;
  }
  auto payload = read_entry(path, key);
  if (payload) {
    // Used now: evicted last. A read-only cache cannot record that, which is no error.
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
    std::lock_guard<std::mutex> lock(g_memory_mutex);
    memory_put_locked(key, *payload);
  }
  return payload;
}

void CompileCache::store(const std::string& key, const std::string& payload) noexcept {
  if (!enabled()) return;
  try {
    {
      std::lock_guard<std::mutex> lock(g_memory_mutex);
      memory_put_locked(key, payload);
    }
    const std::string dir = directory();
    if (!disk_usable(dir, true)) return;
    std::error_code ec;
    const std::string path = path_for(key);
    // Unique per process and call, so concurrent writers never share a temporary.
    static std::atomic<unsigned> counter{0};
    const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                            std::to_string(counter.fetch_add(1));
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return record_error("cannot create", tmp, std::error_code(errno, std::generic_category()));
    Header h{};
    std::memcpy(h.magic, kMagic, 8);
    h.format = kFormat;
    h.key_size = key.size();
    h.payload_size = payload.size();
    h.checksum = checksum(key, payload.data(), payload.size());
    bool ok = write_all(fd, reinterpret_cast<const char*>(&h), sizeof h) &&
              write_all(fd, key.data(), key.size()) &&
              write_all(fd, payload.data(), payload.size());
    if (!ok) ec = std::error_code(errno, std::generic_category());
    if (::close(fd) != 0 && ok) {
      ok = false;
      ec = std::error_code(errno, std::generic_category());
    }
    // rename() is atomic within a directory: readers see the old entry or the new one.
    if (ok) fs::rename(tmp, path, ec);
    if (!ok || ec) {
      record_error(ok ? "cannot rename into" : "cannot write", ok ? path : tmp, ec);
      std::error_code ignored;  // the temporary may be gone already
      fs::remove(tmp, ignored);
      return;
    }
    if (const std::uint64_t limit = max_disk_bytes(); limit > 0) {
      std::uint64_t total = 0;
      for (const DiskEntry& e : list_entries(dir)) total += e.size;
      if (total > limit) trim_disk(limit / 4 * 3);
    }
  } catch (...) {
    // Allocation failure while caching: skip the cache, the compile result stands.
  }
}

void CompileCache::clear_memory() noexcept {
  std::lock_guard<std::mutex> lock(g_memory_mutex);
  memory().clear();
  g_memory_bytes = 0;
}

std::uint64_t CompileCache::max_disk_bytes() {
  const char* v = std::getenv("NANOCUDA_CACHE_MAX_BYTES");
  if (!v || !*v) return kDefaultDiskLimit;
  return parse_byte_size(v);
}

std::uint64_t CompileCache::parse_byte_size(const std::string& text) {
  auto bad = [&] {
    return ValueError("NANOCUDA_CACHE_MAX_BYTES='" + text +
                      "' is not a size: expected a byte count such as 268435456, 256M, 256MiB or 1G "
                      "(K/M/G/T and KiB/MiB/GiB/TiB are powers of 1024, KB/MB/GB/TB powers of 1000; "
                      "0 means no limit)");
  };
  std::size_t i = 0;
  std::uint64_t n = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (n > (UINT64_MAX - 9) / 10) throw bad();
    n = n * 10 + static_cast<std::uint64_t>(text[i++] - '0');
  }
  if (i == 0) throw bad();
  std::string unit;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ') continue;
    unit += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  }
  std::uint64_t scale = 1;
  if (!unit.empty() && unit != "B") {
    const std::string prefixes = "KMGT";
    std::size_t power = prefixes.find(unit[0]);
    std::string rest = unit.substr(1);
    if (power == std::string::npos || !(rest.empty() || rest == "IB" || rest == "B")) throw bad();
    const std::uint64_t base = rest == "B" ? 1000 : 1024;
    for (std::size_t p = 0; p <= power; ++p) scale *= base;
  }
  if (n != 0 && scale > UINT64_MAX / n) throw bad();
  return n * scale;
}

std::vector<std::string> CompileCache::take_warnings() {
  std::lock_guard<std::mutex> lock(g_warn_mutex);
  return std::exchange(g_warnings, {});
}

std::uint64_t CompileCache::trim_disk(std::uint64_t limit) noexcept {
  try {
    std::vector<DiskEntry> entries = list_entries(directory());
    std::uint64_t total = 0;
    for (const DiskEntry& e : entries) total += e.size;
    if (total <= limit) return 0;
    std::sort(entries.begin(), entries.end(),
              [](const DiskEntry& a, const DiskEntry& b) { return a.mtime < b.mtime; });
    std::uint64_t removed = 0;
    for (const DiskEntry& e : entries) {
      if (total <= limit) break;
      // Another process may have deleted it already; either way it no longer counts.
      std::error_code ec;
      if (fs::remove(e.path, ec)) ++removed;
      else if (ec) record_error("cannot delete", e.path, ec);
      total -= e.size;
    }
    g_evicted.fetch_add(removed, std::memory_order_relaxed);
    return removed;
  } catch (...) {
    return 0;
  }
}

CompileCacheInfo CompileCache::info() {
  CompileCacheInfo out;
  out.directory = directory();
  out.enabled = enabled();
  out.disk_max_bytes = max_disk_bytes();
  for (const DiskEntry& e : list_entries(out.directory)) {
    ++out.disk_entries;
    out.disk_bytes += e.size;
  }
  {
    std::lock_guard<std::mutex> lock(g_memory_mutex);
    out.memory_entries = memory().size();
    out.memory_bytes = g_memory_bytes;
  }
  out.memory_max_bytes = kMemoryLimitBytes;
  out.evicted = g_evicted.load(std::memory_order_relaxed);
  out.rejected = g_rejected.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g_error_mutex);
  out.last_error = g_last_error;
  return out;
}

}  // namespace nanocuda
