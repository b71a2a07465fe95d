// Runtime compilation without a GPU: PTX/cubin output, templates, toolkit headers, errors, cache.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "nanocuda/compile/compile_cache.h"
#include "nanocuda/compile/compile_error.h"
#include "nanocuda/compile/cubin_info.h"
#include "nanocuda/compile/linker.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/compile/program.h"

namespace {

using nanocuda::CodeType;
using nanocuda::Program;
using nanocuda::ProgramOptions;

constexpr const char* kSaxpy = R"(
extern "C" __global__ void saxpy(float a, float *x, float *y, float *out, size_t n) {
  size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n) out[tid] = a * x[tid] + y[tid];
}
)";

ProgramOptions sm90a() {
  ProgramOptions o;
  o.arch = "sm_90a";
  return o;
}

// Each test gets its own cache directory, so results do not depend on earlier runs.
class CompileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nanocuda-cache-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    ::setenv("NANOCUDA_CACHE_DIR", dir_.c_str(), 1);
    ::unsetenv("NANOCUDA_CACHE");
    nanocuda::CompileCache::clear_memory();
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    if (std::system(cmd.c_str()) != 0) {
    }  // best-effort cleanup
  }
  std::string dir_;
};

TEST_F(CompileTest, PtxForSm90a) {
  auto code = Program(kSaxpy, sm90a()).compile(CodeType::ptx);
  EXPECT_EQ(code.type(), CodeType::ptx);
  EXPECT_NE(code.bytes().find(".target sm_90a"), std::string::npos);
  EXPECT_NE(code.bytes().find(".entry saxpy"), std::string::npos);
}

TEST_F(CompileTest, CubinForSm90aIsElfWithSymbol) {
  auto code = Program(kSaxpy, sm90a()).compile(CodeType::cubin);
  ASSERT_GT(code.bytes().size(), 4u);
  EXPECT_EQ(code.bytes().substr(0, 4), std::string("\x7f" "ELF"));
  EXPECT_NE(code.bytes().find("saxpy"), std::string::npos);
}

TEST_F(CompileTest, NameExpressionsKeepLoweredNames) {
  const char* src = R"(
template <int M, int N> __global__ void gemm(float* c) { c[0] = M * N; }
)";
  auto code = Program(src, sm90a()).compile(CodeType::cubin, {"gemm<128, 64>"});
  auto it = code.lowered_names().find("gemm<128, 64>");
  ASSERT_NE(it, code.lowered_names().end());
  EXPECT_EQ(it->second.rfind("_Z", 0), 0u);
  EXPECT_NE(code.bytes().find(it->second), std::string::npos);
}

TEST_F(CompileTest, ToolkitHeadersNeedNoIncludePaths) {
  const char* src = R"(
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda/barrier>
#include <stdint.h>
extern "C" __global__ void k(__half* h, CUdeviceptr p, uint64_t* q) { h[0] = __float2half(1.f); q[0] = p; }
)";
  EXPECT_NO_THROW((void)Program(src, sm90a()).compile(CodeType::ptx));
}

TEST_F(CompileTest, SyntaxErrorRaisesCompileErrorWithLog) {
  try {
    (void)Program("extern \"C\" __global__ void k() { int x = }", sm90a(), "bad.cu").compile();
    FAIL() << "expected CompileError";
  } catch (const nanocuda::CompileError& e) {
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
    EXPECT_NE(e.first_error().find("bad.cu"), std::string::npos) << e.first_error();
    EXPECT_FALSE(e.options().empty());
    EXPECT_EQ(e.options().front(), "-arch=sm_90a");
  }
}

TEST_F(CompileTest, ArchSpellings) {
  EXPECT_EQ(nanocuda::normalize_arch("sm_90a"), "90a");
  EXPECT_EQ(nanocuda::normalize_arch("compute_90a"), "90a");
  EXPECT_EQ(nanocuda::normalize_arch("86"), "86");
  EXPECT_THROW((void)nanocuda::normalize_arch("hopper"), nanocuda::ValueError);
}

TEST_F(CompileTest, CacheHitIsFastAndIdentical) {
  Program p(kSaxpy, sm90a());
  auto t0 = std::chrono::steady_clock::now();
  auto cold = p.compile(CodeType::cubin);
  auto t1 = std::chrono::steady_clock::now();
  auto hit = p.compile(CodeType::cubin);
  auto t2 = std::chrono::steady_clock::now();
  nanocuda::CompileCache::clear_memory();
  auto t3 = std::chrono::steady_clock::now();
  auto disk = p.compile(CodeType::cubin);
  auto t4 = std::chrono::steady_clock::now();
  EXPECT_EQ(cold.bytes(), hit.bytes());
  EXPECT_EQ(cold.bytes(), disk.bytes());
  auto us = [](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count(); };
  std::printf("saxpy cubin: cold %.0f us, memory hit %.0f us, disk hit %.0f us\n", us(t0, t1),
              us(t1, t2), us(t3, t4));
  // Ratios, with room for a loaded 2-core CI machine (a disk hit read 4 ms there while other
  // builds ran; it is ~0.2 ms idle): a hit must still be an order of magnitude below NVRTC.
  EXPECT_GE(us(t0, t1), 20 * us(t1, t2));
  EXPECT_GE(us(t0, t1), 10 * us(t3, t4));
  EXPECT_LT(us(t3, t4), 20000.0);
}

TEST_F(CompileTest, CorruptEntryIsRebuilt) {
  Program p(kSaxpy, sm90a());
  auto first = p.compile(CodeType::cubin);
  // Find the one entry and truncate it.
  std::string entry;
  FILE* ls = ::popen(("ls " + dir_ + "/*.ncc").c_str(), "r");
  char buf[4096] = {};
  ASSERT_TRUE(std::fgets(buf, sizeof buf, ls));
  ::pclose(ls);
  entry = buf;
  entry.erase(entry.find_last_not_of("\n") + 1);
  { std::ofstream(entry, std::ios::binary | std::ios::trunc) << "NCUCACHEgarbage"; }
  nanocuda::CompileCache::clear_memory();
  auto again = p.compile(CodeType::cubin);
  EXPECT_EQ(first.bytes(), again.bytes());
  std::ifstream in(entry, std::ios::binary | std::ios::ate);
  EXPECT_GT(static_cast<size_t>(in.tellg()), first.bytes().size());  // rewritten whole
}

TEST_F(CompileTest, LocalHeaderChangeInvalidatesCache) {
  std::string header = dir_ + "/value.h";
  std::string source = dir_ + "/k.cu";
  { std::ofstream(source) << "#include \"value.h\"\nextern \"C\" __global__ void k(int* p) { *p = VALUE; }\n"; }
  { std::ofstream(header) << "#define VALUE 1\n"; }
  auto a = Program::from_file(source, sm90a()).compile(CodeType::ptx);
  { std::ofstream(header) << "#define VALUE 2\n"; }
  auto b = Program::from_file(source, sm90a()).compile(CodeType::ptx);
  EXPECT_NE(a.bytes(), b.bytes());
}

TEST_F(CompileTest, DisabledCacheWritesNothing) {
  ::setenv("NANOCUDA_CACHE", "0", 1);
  (void)Program(kSaxpy, sm90a()).compile(CodeType::ptx);
  ::unsetenv("NANOCUDA_CACHE");
  FILE* ls = ::popen(("ls " + dir_ + " | wc -l").c_str(), "r");
  char buf[64] = {};
  ASSERT_TRUE(std::fgets(buf, sizeof buf, ls));
  ::pclose(ls);
  EXPECT_EQ(std::atoi(buf), 0);
}

// A cubin's kernels come from its ELF symbol table: no driver (this test runs without one).
TEST_F(CompileTest, KernelNamesOfACubinNeedNoDriver) {
  constexpr const char* source = R"(
__device__ float helper(float x) { return 2 * x; }
extern "C" __global__ void b_kernel(float* x) { x[0] = helper(x[0]); }
extern "C" __global__ void a_kernel(float* x) { x[0] = 1; }
template <int N> __global__ void tmpl(float* x) { x[0] = N; }
template __global__ void tmpl<4>(float*);
)";
  auto code = Program(source, sm90a()).compile(CodeType::cubin);
  auto names = code.kernel_names();
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], "_Z4tmplILi4EEvPf");
  EXPECT_EQ(names[1], "a_kernel");
  EXPECT_EQ(names[2], "b_kernel");
  EXPECT_EQ(nanocuda::cubin_kernel_names(code.bytes()), names);
}

TEST(CubinSymbols, GarbageAndTruncatedCubinsAreValueErrors) {
  EXPECT_THROW((void)nanocuda::cubin_kernel_names("not a cubin"), nanocuda::ValueError);
  EXPECT_THROW((void)nanocuda::cubin_kernel_names(""), nanocuda::ValueError);
  std::string header("\x7f" "ELF\x02\x01", 6);
  EXPECT_THROW((void)nanocuda::cubin_kernel_names(header + std::string(10, '\0')), nanocuda::ValueError);
  // Section headers pointing past the end.
  std::string elf = header + std::string(58, '\0');
  elf[0x28] = '\x40';  // e_shoff = 64 (the end of this buffer)
  elf[0x3A] = 64;      // e_shentsize
  elf[0x3C] = 1;       // e_shnum
  EXPECT_THROW((void)nanocuda::cubin_kernel_names(elf), nanocuda::ValueError);
}

// Linker: the nvJitLink session opens on handle() (a bad arch fails there), link() completes
// it once, and a later link() opens a new one; the logs outlive the session.
TEST_F(CompileTest, LinkerSessionOpensEarlyAndLinksOnce) {
  ProgramOptions rdc = sm90a();
  rdc.arch = "sm_90";
  rdc.relocatable_device_code = true;
  auto caller = Program(R"(extern "C" __device__ int inc(int);
extern "C" __global__ void k(int* p) { p[0] = inc(p[0]); })", rdc).compile(CodeType::ptx);
  auto callee = Program(R"(extern "C" __device__ int inc(int x) { return x + 1; })", rdc).compile(CodeType::ptx);
  nanocuda::LinkerOptions options;
  options.arch = "sm_90";
  nanocuda::Linker linker(options);
  linker.add(caller).add(callee);
  nvJitLinkHandle h = linker.handle();
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(linker.handle(), h);  // the same open session
  EXPECT_EQ(linker.link().type(), CodeType::cubin);
  EXPECT_EQ(linker.link().type(), CodeType::cubin);  // a fresh session

  nanocuda::Linker moved = std::move(linker);
  EXPECT_EQ(moved.link().type(), CodeType::cubin);

  nanocuda::Linker missing(options);
  missing.add(caller);
  EXPECT_THROW((void)missing.link(), nanocuda::CompileError);
  EXPECT_NE(missing.error_log().find("inc"), std::string::npos) << missing.error_log();
  missing.close();
  EXPECT_NE(missing.error_log().find("inc"), std::string::npos);

  nanocuda::LinkerOptions bad;
  bad.arch = "99";
  bad.set("ptx", true);
  nanocuda::Linker early(bad);
  early.add(caller);
  try {
    (void)early.handle();
    FAIL() << "an unknown arch opened a session";
  } catch (const nanocuda::CompileError& e) {
    EXPECT_TRUE(e.from_linker());
  }
}

}  // namespace
