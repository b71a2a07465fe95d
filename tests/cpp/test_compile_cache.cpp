// The compile cache's limits and its refusal of damaged entries, without NVRTC: payloads are
// stored and loaded directly in a temporary directory.
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "nanocuda/compile/cache_trust.h"
#include "nanocuda/compile/compile_cache.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {
namespace {

class CacheDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nanocuda-cache-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ::setenv("NANOCUDA_CACHE_DIR", dir_.c_str(), 1);
    ::unsetenv("NANOCUDA_CACHE");
    ::unsetenv("NANOCUDA_CACHE_MAX_BYTES");
    CompileCache::clear_memory();
  }
  void TearDown() override {
    std::error_code ignored;  // a leftover folder only wastes /tmp
    std::filesystem::remove_all(dir_, ignored);
    ::unsetenv("NANOCUDA_CACHE_DIR");
    ::unsetenv("NANOCUDA_CACHE_MAX_BYTES");
    CompileCache::clear_memory();
  }
  static void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }
  static std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string dir_;
};

TEST_F(CacheDir, RoundTripsThroughDisk) {
  CompileCache::store("key-a", "payload-a");
  CompileCache::clear_memory();
  EXPECT_EQ(CompileCache::load("key-a"), std::optional<std::string>("payload-a"));
  EXPECT_EQ(CompileCache::info().disk_entries, 1u);
  EXPECT_EQ(CompileCache::info().disk_max_bytes, 256ull << 20);
}

TEST_F(CacheDir, NeverLoadsATruncatedOrGarbageEntry) {
  CompileCache::store("key-b", std::string(1000, 'x'));
  const std::string path = CompileCache::path_for("key-b");
  const std::string whole = read_file(path);
  const auto rejected = CompileCache::info().rejected;
  for (std::size_t cut : {std::size_t{0}, std::size_t{7}, std::size_t{40}, whole.size() - 1}) {
    write_file(path, whole.substr(0, cut));
    CompileCache::clear_memory();
    EXPECT_FALSE(CompileCache::load("key-b")) << "truncated to " << cut;
  }
  std::string flipped = whole;
  flipped[whole.size() - 10] ^= 1;  // one payload bit: the checksum catches it
  write_file(path, flipped);
  EXPECT_FALSE(CompileCache::load("key-b"));
  write_file(path, whole + "extra");
  EXPECT_FALSE(CompileCache::load("key-b"));
  // A header that claims 3 GB of payload: refused from the file size, nothing allocated.
  std::string huge = whole.substr(0, 48);
  const unsigned long long big = 3ull << 30;
  std::memcpy(huge.data() + 24, &big, 8);
  write_file(path, huge + whole.substr(48));
  EXPECT_FALSE(CompileCache::load("key-b"));
  EXPECT_GE(CompileCache::info().rejected, rejected + 7);
  write_file(path, whole);
  EXPECT_TRUE(CompileCache::load("key-b"));
}

TEST_F(CacheDir, SurvivesAnUnwritableDirectory) {
  // A path under a regular file can never be created, even by root.
  write_file(dir_ + "/file", "x");
  ::setenv("NANOCUDA_CACHE_DIR", (dir_ + "/file/cache").c_str(), 1);
  CompileCache::store("key-c", "payload-c");  // no throw, no crash
  EXPECT_EQ(CompileCache::load("key-c"), std::optional<std::string>("payload-c"));  // memory
  CompileCache::clear_memory();
  EXPECT_FALSE(CompileCache::load("key-c"));
  EXPECT_EQ(CompileCache::info().disk_entries, 0u);
}

TEST_F(CacheDir, EvictsLeastRecentlyUsedPastTheLimit) {
  ::setenv("NANOCUDA_CACHE_MAX_BYTES", "20000", 1);
  const std::string payload(3000, 'p');
  for (int i = 0; i < 20; ++i) {
    CompileCache::store("key-" + std::to_string(i), payload);
    // Keep key-0 in use: a disk hit refreshes its mtime, so it is evicted last.
    CompileCache::clear_memory();
    ASSERT_TRUE(CompileCache::load("key-0")) << i;
    ::usleep(2000);
  }
  CompileCacheInfo info = CompileCache::info();
  EXPECT_LE(info.disk_bytes, 20000u);
  EXPECT_GT(info.evicted, 0u);
  CompileCache::clear_memory();
  EXPECT_TRUE(CompileCache::load("key-0"));
  EXPECT_TRUE(CompileCache::load("key-19"));
  EXPECT_FALSE(CompileCache::load("key-1"));
  ::setenv("NANOCUDA_CACHE_MAX_BYTES", "0", 1);  // unlimited
  EXPECT_EQ(CompileCache::max_disk_bytes(), 0u);
  ::setenv("NANOCUDA_CACHE_MAX_BYTES", "lots", 1);  // not a size: an error, never ignored
  EXPECT_THROW((void)CompileCache::max_disk_bytes(), ValueError);
}

TEST_F(CacheDir, ParsesSizesWithUnits) {
  EXPECT_EQ(CompileCache::parse_byte_size("0"), 0u);
  EXPECT_EQ(CompileCache::parse_byte_size("20000"), 20000u);
  EXPECT_EQ(CompileCache::parse_byte_size("1K"), 1024u);
  EXPECT_EQ(CompileCache::parse_byte_size("256M"), 256ull << 20);
  EXPECT_EQ(CompileCache::parse_byte_size("256MiB"), 256ull << 20);
  EXPECT_EQ(CompileCache::parse_byte_size("1G"), 1ull << 30);
  EXPECT_EQ(CompileCache::parse_byte_size("1gib"), 1ull << 30);
  EXPECT_EQ(CompileCache::parse_byte_size("2 GB"), 2000000000u);
  EXPECT_EQ(CompileCache::parse_byte_size("1T"), 1ull << 40);
  EXPECT_EQ(CompileCache::parse_byte_size("12B"), 12u);
  for (const char* bad : {"", "lots", "-5", "1.5G", "1X", "G", "1GiBs", "99999999999999999999", "99999999999T"})
    EXPECT_THROW((void)CompileCache::parse_byte_size(bad), ValueError) << bad;
  ::setenv("NANOCUDA_CACHE_MAX_BYTES", "1G", 1);
  EXPECT_EQ(CompileCache::max_disk_bytes(), 1ull << 30);
}

// Code is loaded from the cache, so a folder or entry anyone else could have written is
// never read (nor written): the payload stored while it was private is refused after.
TEST_F(CacheDir, RefusesAFolderOrEntryOthersCanWrite) {
  (void)CompileCache::take_warnings();
  CompileCache::store("key-t", "payload-t");
  const std::string path = CompileCache::path_for("key-t");
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto loads = [] {
    CompileCache::clear_memory();
    return CompileCache::load("key-t").has_value();
  };
  ASSERT_TRUE(loads());
  EXPECT_EQ(cache_trust_problem(dir_), "");
  EXPECT_EQ(cache_trust_problem(path), "");

  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);  // a loose folder
  EXPECT_FALSE(loads());
  EXPECT_NE(cache_trust_problem(dir_).find("writable by group or others (mode 0777)"), std::string::npos);
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  ASSERT_TRUE(loads());

  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);  // a loose entry
  EXPECT_FALSE(loads());
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  ASSERT_TRUE(loads());

  if (::geteuid() == 0) {  // another owner (only root can give a file away)
    ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(loads());
    EXPECT_NE(cache_trust_problem(path).find("owned by uid 65534"), std::string::npos);
    ASSERT_EQ(::chown(path.c_str(), 0, 0), 0);
    ASSERT_TRUE(loads());
    ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(loads());
    CompileCache::store("key-u", "payload-u");  // nothing written into it either
    EXPECT_FALSE(std::filesystem::exists(CompileCache::path_for("key-u")));
    ASSERT_EQ(::chown(dir_.c_str(), 0, 0), 0);
  }

  const std::string link = CompileCache::path_for("key-l");  // an entry that is a link
  CompileCache::store("key-l", "payload-l");
  std::filesystem::rename(link, dir_ + "/target");
  std::filesystem::create_symlink(dir_ + "/target", link);
  CompileCache::clear_memory();
  EXPECT_FALSE(CompileCache::load("key-l"));
  EXPECT_NE(cache_trust_problem(link).find("symbolic link"), std::string::npos);

  // Each problem warned once, naming the path and the rule.
  std::vector<std::string> warnings = CompileCache::take_warnings();
  ASSERT_GE(warnings.size(), 3u);
  EXPECT_NE(warnings[0].find("mode 0777"), std::string::npos) << warnings[0];
  EXPECT_TRUE(CompileCache::take_warnings().empty());
}

TEST_F(CacheDir, CreatesTheFolderPrivate) {
  const std::string nested = dir_ + "/a/b/nanocuda";
  ::setenv("NANOCUDA_CACHE_DIR", nested.c_str(), 1);
  CompileCache::store("key-p", "payload-p");
  struct stat st{};
  ASSERT_EQ(::stat(nested.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(CacheDir, NoSharedFallbackWithoutHome) {
  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  std::string saved_home = home ? home : "", saved_xdg = xdg ? xdg : "";
  ::unsetenv("NANOCUDA_CACHE_DIR");
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  std::string dir = CompileCache::directory();
  if (home) ::setenv("HOME", saved_home.c_str(), 1);
  if (xdg) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  EXPECT_EQ(dir.rfind("/tmp", 0), std::string::npos) << dir;  // the account's home, or none
}

TEST_F(CacheDir, MemoryLevelIsBounded) {
  ::setenv("NANOCUDA_CACHE", "1", 1);
  for (int i = 0; i < 700; ++i) CompileCache::store("m-" + std::to_string(i), "x");
  CompileCacheInfo info = CompileCache::info();
  EXPECT_LE(info.memory_entries, 512u);
  EXPECT_GT(info.memory_entries, 0u);
  CompileCache::store("big", std::string(20u << 20, 'b'));
  CompileCache::store("big2", std::string(20u << 20, 'b'));
  CompileCache::store("big3", std::string(20u << 20, 'b'));
  CompileCache::store("big4", std::string(20u << 20, 'b'));
  EXPECT_LE(CompileCache::info().memory_bytes, CompileCache::info().memory_max_bytes);
}

TEST_F(CacheDir, DiskErrorsAreRecordedNotThrown) {
  // The cache folder cannot be made (a file sits where a parent folder should be): the store
  // still succeeds in memory, and info() says why nothing reached the disk.
  write_file(dir_ + "/blocker", "x");
  ::setenv("NANOCUDA_CACHE_DIR", (dir_ + "/blocker/cache").c_str(), 1);
  EXPECT_NO_THROW(CompileCache::store("key-e", "payload-e"));
  EXPECT_EQ(CompileCache::load("key-e"), std::optional<std::string>("payload-e"));
  CompileCacheInfo info = CompileCache::info();
  // "cannot create" from store(), or "cannot list" from info()'s own scan: both name the folder.
  EXPECT_EQ(info.last_error.rfind("cannot ", 0), 0u) << info.last_error;
  EXPECT_NE(info.last_error.find(dir_ + "/blocker/cache"), std::string::npos) << info.last_error;
  EXPECT_EQ(info.disk_entries, 0u);
}

}  // namespace
}  // namespace nanocuda
