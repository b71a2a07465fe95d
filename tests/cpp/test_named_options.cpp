// cuda.core's option names in C++: ProgramOptions/LinkerOptions set(), their flags, and the errors (no GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "nanocuda/compile/linker.h"
#include "nanocuda/compile/program.h"
#include "nanocuda/driver/error.h"

namespace {

using nanocuda::CodeType;
using nanocuda::LinkerOptions;
using nanocuda::Program;
using nanocuda::ProgramOptions;

bool has(const std::vector<std::string>& flags, const std::string& flag) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

TEST(NamedOptions, ProgramOptionsByCudaCoreNames) {
  ProgramOptions o;
  o.set("arch", std::string("sm_90"))
      .set("use_fast_math", true)
      .set("max_register_count", 32LL)
      .set("define_macro", std::vector<std::string>{"N=4"})
      .set("ftz", true)
      .set("prec_div", false)
      .set("diag_suppress", std::vector<std::string>{"177", "550"});
  EXPECT_TRUE(o.fast_math);
  EXPECT_EQ(o.max_registers, 32);
  EXPECT_EQ(o.defines, std::vector<std::string>{"N=4"});
  auto flags = Program("", o).flags(CodeType::ptx);
  EXPECT_TRUE(has(flags, "-arch=compute_90"));
  EXPECT_TRUE(has(flags, "--use_fast_math"));
  EXPECT_TRUE(has(flags, "--ftz=true"));
  EXPECT_TRUE(has(flags, "--prec-div=false"));
  EXPECT_TRUE(has(flags, "--diag-suppress=177,550"));
  // Setting a name again replaces its value.
  o.set("ftz", false);
  EXPECT_TRUE(has(o.named_flags(), "--ftz=false"));
  EXPECT_FALSE(has(o.named_flags(), "--ftz=true"));
}

TEST(NamedOptions, UnknownNameSuggestsCloseOnes) {
  ProgramOptions o;
  try {
    o.set("use_fastmath", true);
    FAIL() << "no error";
  } catch (const nanocuda::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown option 'use_fastmath'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("'use_fast_math'"), std::string::npos);
  }
  EXPECT_THROW(o.set("ftz", std::string("yes")), nanocuda::TypeError);
  EXPECT_THROW(LinkerOptions{}.set("verbos", true), nanocuda::TypeError);
}

TEST(NamedOptions, LinkerOptionsFlags) {
  LinkerOptions l;
  l.set("arch", std::string("sm_90")).set("link_time_optimization", true).set("optimization_level", 3LL);
  auto flags = l.flags(CodeType::cubin);
  EXPECT_EQ(flags[0], "-arch=sm_90");
  EXPECT_TRUE(has(flags, "-lto"));
  EXPECT_TRUE(has(flags, "-O3"));
  EXPECT_TRUE(has(l.flags(CodeType::ptx), "-ptx"));
  EXPECT_THROW((void)l.flags(CodeType::ltoir), nanocuda::ValueError);
}

TEST(NamedOptions, SourceAndTargetTypes) {
  EXPECT_EQ(nanocuda::parse_source_type("nvvm"), nanocuda::SourceType::nvvm);
  EXPECT_THROW((void)nanocuda::parse_source_type("cuda"), nanocuda::ValueError);
  ProgramOptions o;
  o.arch = "sm_90";
  Program ptx(".version 8.0", nanocuda::SourceType::ptx, o);
  EXPECT_STREQ(ptx.backend(), "nvJitLink");
  EXPECT_THROW((void)ptx.compile(CodeType::ltoir), nanocuda::ValueError);
}

}  // namespace

namespace {

// cuda.core's file-name options also take a bool (spelled as cuda.core does); numbers are refused.
TEST(NamedOptions, PathOptionsTakeAFileNameOrABool) {
  ProgramOptions o;
  o.set("arch", std::string("sm_90")).set("time", true).set("create_pch", std::string("k.pch"));
  auto flags = Program("", o).flags(CodeType::cubin);
  EXPECT_TRUE(has(flags, "--time=True"));
  EXPECT_TRUE(has(flags, "--create-pch=k.pch"));
  EXPECT_THROW(o.set("use_pch", 3LL), nanocuda::TypeError);
  o.set("include_path", false);  // cuda.core adds nothing for False
  EXPECT_TRUE(o.include_dirs.empty());
  // A PTX program's time is the linker's -time (it only logs).
  ProgramOptions p;
  p.set("arch", std::string("sm_90")).set("time", std::string("t.csv"));
  EXPECT_TRUE(has(Program(".version 8.0", nanocuda::SourceType::ptx, p).flags(CodeType::cubin), "-time"));
}

TEST(NamedOptions, UnknownOptionNamesTheOwnerAndCloseMatches) {
  // Public: the bindings report unknown dict keys with the same words as set().
  try {
    nanocuda::throw_unknown_option("ProgramOptions", "archh", {"arch", "std", "debug"});
    FAIL() << "no throw";
  } catch (const nanocuda::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("ProgramOptions: unknown option 'archh' (did you mean 'arch'"),
              std::string::npos) << e.what();
  }
  EXPECT_THROW(nanocuda::throw_unknown_option("LinkerOptions", "zzzzzzzz", {"arch"}), nanocuda::TypeError);
}

}  // namespace
