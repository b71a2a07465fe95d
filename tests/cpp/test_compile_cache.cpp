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

#include "nanocuda/compile/compile_cache.h"

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
  ::setenv("NANOCUDA_CACHE_MAX_BYTES", "lots", 1);  // not a number: the default
  EXPECT_EQ(CompileCache::max_disk_bytes(), 256ull << 20);
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
