// The run-time search for NVRTC and the CUDA headers: toolkit and pip-wheel layouts, and the error.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "nanocuda/compile/compile_error.h"
#include "nanocuda/compile/library_search.h"

namespace {

// A throwaway folder tree: mkdir -p and touch, removed with the test binary's /tmp.
std::string make_tree() {
  char tmpl[] = "/tmp/nanocuda-search-XXXXXX";
  return ::mkdtemp(tmpl);
}

void touch(const std::string& root, const std::string& rel) {
  std::string path = root;
  size_t start = 0;
  while (true) {
    size_t slash = rel.find('/', start);
    if (slash == std::string::npos) break;
    ::mkdir((root + "/" + rel.substr(0, slash)).c_str(), 0755);
    start = slash + 1;
  }
  std::ofstream(root + "/" + rel) << "\n";
}

std::string real(const std::string& p) {
  char buf[4096];
  return ::realpath(p.c_str(), buf) ? buf : p;
}

}  // namespace

TEST(LibrarySearch, Cuda13WheelHeadersSitNextToNvrtc) {
  // nvidia/cu13/{lib,include} as nvidia-cuda-nvrtc + nvidia-cuda-runtime + nvidia-cuda-cccl lay them out.
  const std::string root = make_tree();
  touch(root, "nvidia/cu13/lib/libnvrtc.so.13");
  touch(root, "nvidia/cu13/include/cuda.h");
  touch(root, "nvidia/cu13/include/cccl/cuda/std/cstdint");
  const std::string lib = root + "/nvidia/cu13/lib/libnvrtc.so.13";
  EXPECT_EQ(nanocuda::detail::toolkit_include_dir(lib), real(root + "/nvidia/cu13/include"));
  EXPECT_EQ(nanocuda::detail::cccl_include_dir(lib), real(root + "/nvidia/cu13/include/cccl"));
}

TEST(LibrarySearch, Cuda12WheelLayout) {
  const std::string root = make_tree();
  touch(root, "nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
  touch(root, "nvidia/cuda_runtime/include/cuda.h");
  EXPECT_EQ(nanocuda::detail::toolkit_include_dir(root + "/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"),
            real(root + "/nvidia/cuda_runtime/include"));
}

TEST(LibrarySearch, RegisteredIncludeFoldersAreSearched) {
  // cccl installed into another site-packages than NVRTC: found through the registered list
  // (which the Python package fills from sys.path), unless a toolkit on this machine has it.
  const std::string root = make_tree();
  touch(root, "site/nvidia/cu13/include/cccl/cuda/std/cstdint");
  nanocuda::detail::add_include_search_dirs({root + "/site/nvidia/cu13/include"});
  const std::string found = nanocuda::detail::cccl_include_dir(root + "/nowhere/lib/libnvrtc.so");
  ASSERT_FALSE(found.empty());
  struct stat st {};
  if (::stat("/usr/local/cuda/include/cccl/cuda/std/cstdint", &st) != 0) {
    EXPECT_EQ(found, real(root + "/site/nvidia/cu13/include/cccl"));
  }
  const auto extra = nanocuda::detail::include_search_dirs_extra();
  EXPECT_EQ(extra.back(), root + "/site/nvidia/cu13/include");
}

TEST(LibrarySearch, MissingLibraryNamesThePipPackageAndEveryPlaceLooked) {
  ::setenv("NANOCUDA_TEST_NO_SUCH_LIB", "/nonexistent/libnothing.so", 1);
  std::string what;
  try {
    (void)nanocuda::detail::load_toolkit_library("Nothing (libnanocuda_nothing.so)",
                                                 "libnanocuda_nothing.so",
                                                 "NANOCUDA_TEST_NO_SUCH_LIB", "nvidia-nothing");
  } catch (const nanocuda::ToolkitNotFoundError& e) {
    what = e.what();
  }
  {
    ASSERT_FALSE(what.empty()) << "a library that does not exist loaded";
    EXPECT_NE(what.find("pip install nvidia-nothing"), std::string::npos) << what;
    EXPECT_NE(what.find("nanocuda[nvrtc]"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/libnothing.so"), std::string::npos) << what;
    EXPECT_NE(what.find("/usr/local/cuda/lib64"), std::string::npos) << what;
  }
  ::unsetenv("NANOCUDA_TEST_NO_SUCH_LIB");
}
