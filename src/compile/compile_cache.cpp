// The compiled-code cache: in-memory map, then checked files written atomically.
#include "nanocuda/compile/compile_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

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

std::mutex g_memory_mutex;
std::unordered_map<std::string, std::string>& memory() {
  static auto* map = new std::unordered_map<std::string, std::string>();  // never destroyed
  return *map;
}

std::uint64_t checksum(const std::string& key, const char* payload, std::size_t size) {
  return detail::hash64(payload, size, detail::hash64(key.data(), key.size()));
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void make_dirs(const std::string& dir) {
  for (size_t pos = 1; pos != std::string::npos;) {
    pos = dir.find('/', pos + 1);
    ::mkdir(dir.substr(0, pos).c_str(), 0755);
  }
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> read_entry(const std::string& path, const std::string& key) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return std::nullopt;
  std::optional<std::string> result;
  Header h{};
  if (std::fread(&h, sizeof h, 1, f) == 1 && std::memcmp(h.magic, kMagic, 8) == 0 &&
      h.format == kFormat && h.key_size == key.size() && h.payload_size < (1ull << 32)) {
    std::string stored_key(h.key_size, '\0');
    std::string payload(h.payload_size, '\0');
    if (std::fread(stored_key.data(), 1, stored_key.size(), f) == stored_key.size() &&
        std::fread(payload.data(), 1, payload.size(), f) == payload.size() &&
        std::fgetc(f) == EOF && stored_key == key &&
        checksum(key, payload.data(), payload.size()) == h.checksum)
      result = std::move(payload);
  }
  std::fclose(f);
  return result;
}

}  // namespace

std::string CompileCache::directory() {
  if (const char* d = std::getenv("NANOCUDA_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/nanocuda";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/nanocuda";
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
    if (auto it = memory().find(key); it != memory().end()) return it->second;
  }
  auto payload = read_entry(path_for(key), key);
  if (payload) {
    std::lock_guard<std::mutex> lock(g_memory_mutex);
    memory().emplace(key, *payload);
  }
  return payload;
}

void CompileCache::store(const std::string& key, const std::string& payload) noexcept {
  if (!enabled()) return;
  try {
    {
      std::lock_guard<std::mutex> lock(g_memory_mutex);
      memory()[key] = payload;
    }
    const std::string dir = directory();
    make_dirs(dir);
    const std::string path = path_for(key);
    // Unique per process and call, so concurrent writers never share a temporary.
    static std::atomic<unsigned> counter{0};
    const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                            std::to_string(counter.fetch_add(1));
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    Header h{};
    std::memcpy(h.magic, kMagic, 8);
    h.format = kFormat;
    h.key_size = key.size();
    h.payload_size = payload.size();
    h.checksum = checksum(key, payload.data(), payload.size());
    bool ok = write_all(fd, reinterpret_cast<const char*>(&h), sizeof h) &&
              write_all(fd, key.data(), key.size()) &&
              write_all(fd, payload.data(), payload.size());
    ok = (::close(fd) == 0) && ok;
    // rename() is atomic within a directory: readers see the old entry or the new one.
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) ::unlink(tmp.c_str());
  } catch (...) {
    // Allocation failure while caching: skip the cache, the compile result stands.
  }
}

void CompileCache::clear_memory() noexcept {
  std::lock_guard<std::mutex> lock(g_memory_mutex);
  memory().clear();
}

}  // namespace nanocuda
