// Rules the Python binding used to hold, now in the core: option names, backends, build modes, managed-memory names.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "nanocuda/compile/linker.h"
#include "nanocuda/compile/program.h"
#include "nanocuda/core/managed_ops.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/launch/graph_builder.h"

namespace {

using nanocuda::ProgramOptions;

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no throw";
}

TEST(CoreRules, ProgramOptionsTakesTheFieldsOwnNames) {
  ProgramOptions o;
  o.set("fast_math", true).set("default_device", false).set("defines", std::vector<std::string>{"A=1"});
  o.set("include_dirs", std::string("/opt/inc")).set("extra_flags", std::vector<std::string>{"-Xfoo"});
  EXPECT_TRUE(o.fast_math);
  EXPECT_FALSE(o.default_device);
  EXPECT_EQ(o.defines, std::vector<std::string>{"A=1"});
  EXPECT_EQ(o.include_dirs, std::vector<std::string>{"/opt/inc"});
  EXPECT_EQ(o.extra_flags, std::vector<std::string>{"-Xfoo"});
  // An unknown name is compared with these names too.
  EXPECT_NE(message_of([&] { o.set("fast_mat", true); }).find("did you mean 'fast_math'"), std::string::npos);
  EXPECT_THROW(o.set("fast_math", std::string("yes")), nanocuda::TypeError);
}

TEST(CoreRules, LinkerOptionsTakesLtoAndExtraFlags) {
  nanocuda::LinkerOptions o;
  o.set("lto", true).set("extra_flags", std::vector<std::string>{"-Xbar"});
  EXPECT_TRUE(o.lto);
  EXPECT_EQ(o.extra_flags, std::vector<std::string>{"-Xbar"});
  EXPECT_NE(message_of([&] { o.set("ltoo", true); }).find("did you mean 'lto'"), std::string::npos);
}

TEST(CoreRules, BackendFlagsKnowTheThreeBackends) {
  ProgramOptions o;
  o.arch = "90";
  std::vector<std::string> flags = nanocuda::backend_flags(o, "nvrtc");
  EXPECT_NE(std::find(flags.begin(), flags.end(), "-arch=sm_90"), flags.end());
  try {
    (void)nanocuda::backend_flags(o, "clang");
    FAIL() << "no throw";
  } catch (const nanocuda::ValueError& e) {
    EXPECT_EQ(e.call(), "nanocuda::backend_flags");
    EXPECT_NE(std::string(e.what()).find("unknown backend 'clang'"), std::string::npos) << e.what();
  }
}

TEST(CoreRules, BuildModesByName) {
  using Mode = nanocuda::GraphBuilder::Mode;
  EXPECT_EQ(nanocuda::GraphBuilder::mode_from_name("relaxed"), Mode::Relaxed);
  EXPECT_EQ(nanocuda::GraphBuilder::mode_from_name("thread_local"), Mode::ThreadLocal);
  EXPECT_EQ(nanocuda::GraphBuilder::mode_from_name("global"), Mode::Global);
  // cuda.core's first words, then the C++ call (the binding respells it).
  EXPECT_EQ(message_of([] { (void)nanocuda::GraphBuilder::mode_from_name("fast"); }),
            "Unsupported build mode: 'fast' (GraphBuilder::begin_building: mode must be 'relaxed', "
            "'thread_local' or 'global')");
  EXPECT_NE(message_of([] { (void)nanocuda::GraphBuilder::mode_from_name({}, "3"); }).find("mode: 3 ("),
            std::string::npos);
}

TEST(CoreRules, ManagedLocationsAndAdviceByName) {
  using nanocuda::MemoryLocation;
  EXPECT_EQ(MemoryLocation::from_name("device", 1, "f"), MemoryLocation::device(1));
  EXPECT_EQ(MemoryLocation::from_name("host_numa_current", 7, "f").id, 0);
  for (const char* kind : {"device", "host", "host_numa", "host_numa_current"})
    EXPECT_STREQ(MemoryLocation::from_name(kind, 0, "f").kind_name(), kind);
  EXPECT_EQ(message_of([] { (void)MemoryLocation::from_name("gpu", 0, "ManagedBuffer::advise"); }),
            "ManagedBuffer::advise: unknown location kind 'gpu'");
  EXPECT_EQ(nanocuda::advice_from_name("set_accessed_by", "f"), CU_MEM_ADVISE_SET_ACCESSED_BY);
  EXPECT_THROW((void)nanocuda::advice_from_name("read_mostly", "f"), nanocuda::ValueError);
}

}  // namespace
