// The local-include scanner (CPU): what the compile cache key and load()'s change check read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <string>

#include "nanocuda/compile/local_includes.h"

namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(LocalIncludes, FollowsQuotedIncludesOnceInOrder) {
  fs::path dir = fs::temp_directory_path() / ("nanocuda_scan_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  write(dir / "b.h", "#include \"sub/c.h\"\n#include <cuda.h>\n");
  write(dir / "sub/c.h", "  #  include \"d.h\"\n");        // found in the including folder
  write(dir / "inc/d.h", "#include \"b.h\"\n");  // d.h on the search path; b.h seen already
  const std::string source = "#include \"b.h\"\n#include \"nope.h\"\n#include \"b.h\"\n";
  auto found = nanocuda::scan_local_includes(source, dir.string(),
                                             {(dir / "inc").string(), dir.string()});
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].path, (dir / "b.h").string());
  EXPECT_EQ(found[0].contents, "#include \"sub/c.h\"\n#include <cuda.h>\n");
  EXPECT_EQ(found[1].path, (dir / "sub/c.h").string());
  EXPECT_EQ(found[2].name, "d.h");
  EXPECT_EQ(found[2].path, (dir / "inc/d.h").string());
  EXPECT_EQ(found[3].name, "nope.h");
  EXPECT_TRUE(found[3].path.empty());  // missing: reported, not followed
  fs::remove_all(dir);
}

TEST(LocalIncludes, AFolderIsNotAFile) {
  fs::path dir = fs::temp_directory_path() / ("nanocuda_scan_dir_" + std::to_string(::getpid()));
  fs::create_directories(dir / "x.h");
  auto found = nanocuda::scan_local_includes("#include \"x.h\"\n", dir.string(), {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(found[0].path.empty());
  fs::remove_all(dir);
}

}  // namespace
